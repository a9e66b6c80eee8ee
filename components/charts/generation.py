"""The generation view's heatmap of a step's query rows, one a head, over the cached keys.

Every step's rows at a layer are sent once (steps_frames), on the last step's keys, those a step has not cached yet
empty (grey); a point selection bound to a range input above the chart, Step, picks the step the cells show, so that
an arrow key repaints at once with no round trip to the server, as the one-head view's layer and head
(charts/scrub.py). The spec (steps_spec) holds no number and no token: it is built once for every text of its shape
(chart_memos.chart_spec, label_stand_ins), and scrub.placed sets where its Step starts. A long text's row, past
heatmap.MAX_VECTOR_CELLS, is drawn as a picture of one step (step_row), its step picked on the server.

Letters used in shape comments: n steps, nh query heads, S cached tokens at the last step.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.chart_text import largest_cells
from components.charts.heatmap import (
    CELLS,
    MAX_VECTOR_CELLS,
    RANGES,
    cells_by_head,
    heatmap,
    heatmap_panel,
    named,
    picked,
)
from components.charts.lettering import READING, Lettering
from components.charts.scrub import ALL_LAYERS_CELLS, picker
from components.charts.spoken_numbers import figure

SCHEME, DOMAIN = "blues", (0.0, 1.0)  # weights: 0 to 1, the same colours at every step and layer
# The selection that picks a step in the browser, its input labelled "Step". Not "step": Vega-Lite reads an input's
# binding for a field of that name from the binding's own "step" (1), and drew a text box
STEP = "decode_step"
PANEL = "steps"  # the name of the chart's datasets: "steps-cells", "steps-ranges"
ROW_TITLE, COLUMN_TITLE = "query head", "cached key"
NOT_CACHED = "not cached yet: this step's query cannot read it"  # a grey cell's tooltip: a key of a later step
# Every step's rows are sent when they fit the budget of a heatmap sent whole in cells: 32 steps (the page's most) of a
# row of 64 × 64 cells, about 0.5 MB.
STEPS_CELLS = ALL_LAYERS_CELLS["vector"]


def fits(steps: int, heads: int, keys: int) -> bool:
    """Whether every step's rows (steps × heads × keys) are sent as cells and picked in the browser: each row drawn
    as cells, all of them within STEPS_CELLS. Otherwise a step's row is drawn alone (step_row)."""
    return heads * keys <= MAX_VECTOR_CELLS and steps * heads * keys <= STEPS_CELLS


def steps_spec(row_labels: tuple[str, ...], column_labels: tuple[str, ...], steps: int, title: str, size: int,
               lettering: Lettering = READING) -> dict:
    """The chart of steps_frames' rows without its data: heatmap_panel's cells, whose value is the column of the step
    its Step input holds (bound from 0 to steps - 1, at 0: scrub.placed moves it). The labels are stand-ins
    (label_stand_ins.with_labels puts a text's own into a copy). Positional, as chart_memos.chart_spec calls it."""
    step = picker(STEP, "Step", steps)
    chart = heatmap_panel(named(PANEL, CELLS), named(PANEL, RANGES), False, list(row_labels), list(column_labels),
                          title=title, row_title=ROW_TITLE, column_title=COLUMN_TITLE, scheme=SCHEME, size=size,
                          lettering=lettering, params=[step], column=f"datum[{picked(STEP)}]",
                          missing=NOT_CACHED)
    return chart.properties(autosize=alt.AutoSizeParams(type="pad")).to_dict(validate=False)


def steps_frames(rows: np.ndarray) -> dict[str, pd.DataFrame]:
    """rows (n, nh, S), each step's query rows over the last step's keys (NaN: not cached yet) -> steps_spec's
    datasets: a line per cell, its value at every step in columns "0", "1", … (cells_by_head), and the colour
    range, DOMAIN whatever the step."""
    return {named(PANEL, CELLS).name: cells_by_head(rows[:, None]),  # (nh·S, 2 + n)
            named(PANEL, RANGES).name: pd.DataFrame({"value": list(DOMAIN)})}


def step_row(weights: np.ndarray, row_labels, column_labels, title: str, size: int,
             lettering: Lettering = READING):
    """weights (nh, S) of one step's query rows, one a head, over the cached keys: the heatmap itself, as cells or,
    past heatmap.MAX_VECTOR_CELLS, as a picture."""
    return heatmap(weights, list(row_labels), list(column_labels), title=title, row_title=ROW_TITLE,
                   column_title=COLUMN_TITLE, scheme=SCHEME, domain=list(DOMAIN), size=size, lettering=lettering)


def describe_rows(opening: str, weights: np.ndarray, keys: list[str], positions: list[int]) -> str:
    """A step's query rows in words, for a screen reader: "{opening}: 4 heads over 8 cached keys. Largest weights:
    head 2 → 'what' (token 0) 0.81; …"; weights (nh, S) over the keys the step has cached (those drawn in colour),
    keys their tokens and positions their places in the text (a token may stand at two: a space, a letter)."""
    cells = "; ".join(f"head {head} → {keys[key]!r} (token {positions[key]}) {figure(weights[head, key])}"
                      for head, key in largest_cells(weights))
    return f"{opening}: {weights.shape[0]} heads over {len(keys)} cached keys. Largest weights: {cells}."
