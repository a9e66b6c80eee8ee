"""The counting lab's two maps in one chart: the window attending to itself (W × W) and each symbol's question to
the window (S × W), at every window size sent, the one shown picked by the chart's own window input.

As scrub.picker picks a layer, a point selection of the win_size column bound to a range input keeps one
size's cells (a plain comparison, heatmap.filter_on), and the axes read that size's letters from a parameter: a
move of the input redraws the maps in the browser, from the data it has. A chart sent one window size alone (a
trained head: its config's only) draws it whatever its input says, and the move asks for the rerun that brings
the next. Both maps colour a weight from 0 (white) to 1 on one scale, fixed in the spec, before training and
after. The cells are every heatmap's (heatmap.vector_cells), each as large as its band. Drawn on a canvas: a move
repaints a few hundred cells, where SVG made each an element anew. Plain functions of numbers -> Altair charts,
testable without a server.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.colours import colour_scale
from components.charts.heatmap import CELLS, filter_on, named, picked, titled, vector_cells
from components.charts.legends import legend
from components.charts.lettering import READING, Lettering
from components.charts.plot_sizes import MIN_ROW_PX
from components.charts.token_axes import LABEL_COLOUR, LABEL_LIMIT_PX

WIN = "win_size"  # the window input's selection, and the column whose rows it keeps
WINDOW, LETTERS = "window", "letters"  # the two maps (panels), whose cells are sent by name: heatmap.named
WINDOW_LETTERS = "window_letters"  # {W: the window's letters}: the window map's labels at each size sent
SYMBOL_LABELS = "symbol_labels"  # the letters map's rows: the blank and the letters
WINDOW_TITLE = "Attention weights, position × position"
LETTERS_TITLE = "Each symbol's question to this window"
WEIGHT_DOMAIN = [0.0, 1.0]  # the same colour is the same weight, whatever the head and the window
MAPS_SPACING_PX = 24


def cells(matrices: dict[int, np.ndarray]) -> pd.DataFrame:
    """{W: matrix (R, K)} -> one row a cell of every matrix: its window size, row, column and value."""
    frames = []
    for size, matrix in matrices.items():
        rows, columns = np.indices(matrix.shape)  # each (R, K)
        frames.append(pd.DataFrame({WIN: np.full(matrix.size, size, dtype=np.uint8),
                                    "row": rows.ravel().astype(np.uint8), "column": columns.ravel().astype(np.uint8),
                                    "value": np.asarray(matrix, dtype=np.float32).ravel()}))
    return pd.concat(frames, ignore_index=True)


def maps_frames(window_weights: dict[int, np.ndarray], symbol_weights: dict[int, np.ndarray]
                ) -> dict[str, pd.DataFrame]:
    """The two maps' datasets by name: {W: (W, W) weights} and {W: (S, W) weights} at every window size sent."""
    return {named(WINDOW, CELLS).name: cells(window_weights), named(LETTERS, CELLS).name: cells(symbol_weights)}


def maps_chart(window_data, letters_data, window_letters: dict[int, tuple[str, ...]], symbols: tuple[str, ...],
               start: int, offered: tuple[int, int], size: int, beside: bool, square_at: int,
               lettering: Lettering = READING) -> alt.TopLevelMixin:
    """Both maps (window_data and letters_data: maps_frames' datasets, or their names) side by side or one under the
    other, at the sizes of window_letters ({W: its letters}), picked by one input from offered[0] to offered[1]
    (every size the page offers, sent or not), starting at start. size: the px of the window map's side and of the
    letters map's width, whose cells are square at a window of square_at (the plots keep their sizes from window to
    window: the page under them does not move)."""
    sizes = sorted(window_letters)
    picker = alt.selection_point(name=WIN, fields=[WIN], value=[{WIN: start}], clear=False,
                                 bind=alt.binding_range(min=offered[0], max=offered[1], step=1, name="Window size W"))
    many = len(sizes) > 1
    shown = picked(WIN) if many else str(sizes[0])  # one size sent: drawn whatever the input says
    letters_of = f"{WINDOW_LETTERS}[{shown}]"
    colour, key = colour_scale("blues", domain=WEIGHT_DOMAIN), legend(size)
    keep = filter_on(picker) if many else None
    window = _map(window_data, keep, f"{letters_of}[datum.row]", letters_of, "query: the letter asking",
                  WINDOW_TITLE, colour, key, size, size, lettering, [picker])
    height = max(len(symbols) * MIN_ROW_PX, min(size, round(size * len(symbols) / square_at)))
    letters = _map(letters_data, keep, f"{SYMBOL_LABELS}[datum.row]", letters_of, "query: the symbol asking",
                   LETTERS_TITLE, colour, key, size, height, lettering)
    labels = {str(size): list(letters) for size, letters in window_letters.items()}
    chart = (alt.hconcat if beside else alt.vconcat)(window, letters, spacing=MAPS_SPACING_PX)
    return chart.add_params(alt.param(name=WINDOW_LETTERS, value=labels),
                            alt.param(name=SYMBOL_LABELS, value=list(symbols))).resolve_scale(
        color="shared").properties(autosize=alt.AutoSizeParams(type="pad"),
                                   usermeta={"embedOptions": {"renderer": "canvas"}})


def _map(data, keep: str | None, row_label: str, letters_of: str, row_title: str, title: str, colour: alt.Scale,
         key: alt.Legend, width: int, height: int, lettering: Lettering, params: list = ()) -> alt.Chart:
    """One map: heatmap.vector_cells' cells, a cell per (row, column) of the window size shown (keep: the filter
    that keeps its rows, None when one size is sent), each as large as its band (the window's size changes how many
    there are), its letters on the axes (read off the window size shown); params: the selections it carries."""
    axis = {"labelAngle": 0, "labelOverlap": False, "labelFlush": False, "labelLimit": LABEL_LIMIT_PX,
            "labelColor": LABEL_COLOUR}
    x_axis = alt.Axis(title="key: the letter looked at", labelExpr=f"{letters_of}[datum.value]", **axis)
    y_axis = alt.Axis(title=row_title, labelExpr=row_label.replace("datum.row", "datum.value"), **axis)
    cells = vector_cells(data, (row_label, f"{letters_of}[datum.column]"), x_axis, y_axis, colour, "weight",
                         list(params), None, None, key, keep=keep)
    # A layer of one: the page names the datasets of the window's letters in it (label_stand_ins.with_label_lists)
    return titled(alt.layer(cells), title, width, height, lettering)
