"""Marks over a signed heatmap's cells that say by shape what their colours say, for a reader who cannot tell the
colours apart: a cross, "×", in a masked cell (grey, a key its query may not look at: the masked scores) and a bar,
"−", in a negative cell. Drawn only where a cell is big enough to hold one, and only on the cells that need one, so
that a chart of weights (no sign, and never −∞) carries no mark layer and costs nothing more.

A mark reads the value a cell shows as the cell does (the picked head's column, heatmap.picked_column), so that
it follows a move in the browser without a rerun.
"""

from __future__ import annotations

import altair as alt

from components.charts.token_axes import TOKEN_BANDS

MARK_MIN_PX = 12  # px a cell must be across and down to hold a mark: below, a cross is a smudge
# The cross, as a symbol's shape (a path in the box from -1 to 1, which Vega scales to the symbol's size): a shape,
# not a text "×", which would be a text smaller than a projector's least size (tests/page/test_presentation.py).
MASKED_MARK = "M-1,-1L1,1M-1,1L1,-1"
MASKED_MARK_COLOUR = "#4c4c4c"  # on masked.MASKED_COLOUR's grey: contrast 5.1:1
# A negative cell's bar: white edged in near-black, seen on the light middle of a signed scale and on its dark ends
# alike (a text "−" in one colour vanished on one or the other).
SIGN_FILL, SIGN_EDGE = "#ffffff", "#10151c"
SIGN_MOST_PX = (16, 4)  # the bar's width and height at most: a minus sign, not a box, in a large cell
# A cell holds no number: masked (heatmap.MASKED says the same of the cells).
NO_NUMBER = "!isValid(datum.value) || !isFinite(datum.value)"
NEGATIVE = "isValid(datum.value) && isFinite(datum.value) && datum.value < 0"


def big_enough(cell: tuple[float, float]) -> bool:
    """Whether cells of cell (px across, px down) hold a mark."""
    return min(cell) >= MARK_MIN_PX


def cell_marks(cells, value: str | None, cell: tuple[float, float], labels: tuple[str, str], tooltip: dict
               ) -> list[alt.Chart]:
    """The layers to draw over cells (a line a cell: its row, its column, its values; heatmap.cells_by_head) whose
    shown value the expression value reads (None: the line's own "value") on a signed scale, cell px across and down:
    a "×" on each masked cell and a bar on each negative one; none when the cells are too small to hold them. labels
    and tooltip: the cells' own (the expressions of a row's and a column's label, and the tooltip that reads them),
    so that a mark over a cell says what the cell says."""
    if not big_enough(cell):
        return []
    width, height = cell
    base = alt.Chart(cells)
    if value is not None:
        base = base.transform_calculate(value=value)
    position = {"x": alt.X("column:O", scale=TOKEN_BANDS), "y": alt.Y("row:O", scale=TOKEN_BANDS),
                "tooltip": tooltip}

    def kept(where: str) -> alt.Chart:  # the lines a mark is drawn on, labelled after they are filtered
        return base.transform_filter(where).transform_calculate(row_label=labels[0], column_label=labels[1])

    cross = round(min(width, height, 28) * 0.45)  # px across
    return [kept(NO_NUMBER).mark_point(
                shape=MASKED_MARK, size=cross * cross, filled=False, stroke=MASKED_MARK_COLOUR, strokeWidth=1.5,
                opacity=1, aria=False).encode(**position),
            kept(NEGATIVE).mark_rect(
                width=round(min(width * 0.4, SIGN_MOST_PX[0]), 1),
                height=round(min(max(2.0, height * 0.1), SIGN_MOST_PX[1]), 1),
                fill=SIGN_FILL, stroke=SIGN_EDGE, strokeWidth=1, aria=False).encode(**position)]
