"""The logit lens as one map: a row per layer read, a column per position, each cell coloured by the probability
of its top token and lettered with that token; a ring on the first layer whose top token is the model's final
guess. heatmap.py's cells (heatmap_panel), with the tokens written over them as data (never an expression).

Letters used in shape comments: L layers, P positions drawn.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.draw import layered, spec_and_frames
from components.charts.heatmap import cells_by_head, heatmap_panel
from components.charts.lettering import READING, Lettering
from components.charts.spoken_numbers import counted, figure

FIRST_RING = "#d62728"  # the first layer whose top token is the final guess
DARK_CELL = 0.55  # above this probability a cell's token is written white, below it black
TOKEN_CHARS = 8  # a cell's token cut to this many characters (the tooltip has it whole)
LETTERED_CELL_PX = 32  # a cell narrower than this holds no letters: its token is in its tooltip
# The map's datasets, named: its spec is the same for every lens of its shape (kept_lens_map), and its frames for a
# new lens are made without Altair (lens_frames), under the names the spec reads.
CELLS, RANGE, LETTERS, RINGS = "lens-cells", "lens-range", "lens-letters", "lens-rings"


def cell_tokens(top_tokens: list[list[str]], probabilities: np.ndarray) -> pd.DataFrame:
    """[layer][position] top tokens and their (L + 1, P) probabilities -> a row per cell: row, column, the token
    as written in the cell and whole, its probability, and whether it is written white."""
    rows = [{"row": layer, "column": position, "whole": token,
             "short": token if len(token) <= TOKEN_CHARS else token[:TOKEN_CHARS - 1] + "…",
             "probability": float(probabilities[layer, position]),
             "white": bool(probabilities[layer, position] > DARK_CELL)}
            for layer, per_layer in enumerate(top_tokens) for position, token in enumerate(per_layer)]
    return pd.DataFrame(rows, columns=["row", "column", "whole", "short", "probability", "white"])


def lens_map(probabilities: np.ndarray, top_tokens: list[list[str]], first_layer: np.ndarray, layer_labels: list[str],
             position_labels: list[str], *, title: str, size: int, lettering: Lettering = READING) -> alt.TopLevelMixin:
    """probabilities (L + 1, P) of each cell's top token, top_tokens [layer][position], first_layer (P,) the first
    row whose top token is the final guess; rows named by layer_labels, columns by position_labels (the text's
    tokens there)."""
    frames = lens_frames(probabilities, top_tokens, first_layer)
    letters, rings = frames[LETTERS], frames[RINGS]
    font_px = max(lettering.smallest_text_px, lettering.font_px - 2)  # a little under the labels', where room allows
    tooltip = [alt.Tooltip("row:O", title="layer read"), alt.Tooltip("whole:N", title="top token"),
               alt.Tooltip("probability:Q", format=".1%")]
    if size / max(probabilities.shape) >= LETTERED_CELL_PX:  # the token written in its cell
        text = alt.Chart(letters).mark_text(aria=False, fontSize=font_px).encode(
            x=alt.X("column:O"), y=alt.Y("row:O"), text="short:N",
            color=alt.condition("datum.white", alt.value("white"), alt.value("black")), tooltip=tooltip)
    else:  # cells too small to letter (SmolLM2's 31 rows): the token in the tooltip, over the whole cell
        text = alt.Chart(letters).mark_rect(aria=False, opacity=0.001).encode(
            x=alt.X("column:O"), y=alt.Y("row:O"), tooltip=tooltip)
    ring = alt.Chart(rings).mark_rect(filled=False, stroke=FIRST_RING, strokeWidth=2.5, aria=False).encode(
        x=alt.X("column:O"), y=alt.Y("row:O"))
    chart = heatmap_panel(frames[CELLS], frames[RANGE], False, layer_labels,
                          position_labels, title=title, value_title="P(top token)", row_title="layer read",
                          column_title="after the token", scheme="blues", size=size, lettering=lettering, aria=True,
                          over=[text, ring])
    return chart.properties(autosize=alt.AutoSizeParams(type="pad"))


def lens_frames(probabilities: np.ndarray, top_tokens: list[list[str]], first_layer: np.ndarray
                ) -> dict[str, pd.DataFrame]:
    """lens_map's datasets by name (each frame's attrs hold it: draw.named_data): its cells, its colour range, its
    cells' tokens and its rings. Arguments as lens_map's."""
    frames = {
        CELLS: cells_by_head(np.asarray(probabilities, dtype=np.float32)[None, None]),  # (1, 1, L + 1, P)
        RANGE: pd.DataFrame({"value": [0.0, 1.0]}),
        LETTERS: cell_tokens(top_tokens, probabilities),
        RINGS: pd.DataFrame({"row": np.asarray(first_layer, dtype=int), "column": np.arange(len(first_layer))}),
    }
    for name, frame in frames.items():
        frame.attrs["name"] = name
    return frames


def lens_spec(shape: tuple[int, int], layer_labels: tuple[str, ...], position_labels: tuple[str, ...],
              options: tuple) -> dict:
    """lens_map's spec, the same for every lens of its shape (L + 1, P) and options (sorted (name, value) pairs),
    built on zeros and no tokens: its datasets (lens_frames) are sent beside it, by their names."""
    blank = [[""] * shape[1] for _ in range(shape[0])]
    chart = lens_map(np.zeros(shape, dtype=np.float32), blank, np.zeros(shape[1], dtype=int), list(layer_labels),
                     list(position_labels), **dict(options))
    return spec_and_frames(layered(chart))[0]


def describe_lens(probabilities: np.ndarray, top_tokens: list[list[str]], first_layer: np.ndarray,
                  position_labels: list[str], positions: list[int]) -> str:
    """lens_map's chart in words, for a screen reader: at the last position drawn (the guess after the text's last
    token), the layer whose top token first is the final guess and the final guess's probability; and at how many
    of the positions drawn it is on top before the output. Arguments as lens_map's (positions: each column's place
    in the text)."""
    layers = probabilities.shape[0] - 1  # row 0 is the embeddings, row L the last layer's output
    final = top_tokens[-1][-1]
    early = int((np.asarray(first_layer) < layers).sum())
    last = figure(probabilities[-1, -1])  # the final guess's: the last row's top token is the final guess
    read = counted(len(positions), "position")  # a BERT's lens reads its [MASK] alone
    return (f"The logit lens, rows 0 (the embeddings) to {layers} read at {read}. At position {positions[-1]}, "
            f"{position_labels[-1]!r}: the final top token {final!r} first becomes top at layer "
            f"{int(first_layer[-1])} of {layers}; at layer {layers} its probability is {last}. The final guess is on "
            f"top before the output at {early} of {read}.")
