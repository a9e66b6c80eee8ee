"""How much room a plot's row labels take, and how large a plot its column then leaves: whole words
("ophthalmologist") are longer than most tokens, and a legend beside a plot takes room of its own."""

from __future__ import annotations

import numpy as np

from components.charts.legends import LEGEND_BESIDE_PX
from components.charts.lettering import READING, Lettering
from components.charts.plot_sizes import MIN_PLOT_PX
from components.charts.token_axes import LABEL_LIMIT_PX

# px a plot's row labels need besides their own length: the axis title, its padding and the ticks left of the plot
# (48 in Chromium), and the legend under the plot, which runs a little past its right end
ROW_TITLE_ROOM_PX = 64
LABEL_CHARACTER_EM = 0.55  # an axis label's average character, in em of its font (the theme's sans-serif)


def label_overflow_px(labels, lettering: Lettering = READING) -> int:
    """How much more room than lettering.label_room_px a plot's row labels take, the longest cut at LABEL_LIMIT_PX,
    with their title: what the plot gives up to stay in its column. Whole words ("ophthalmologist") are longer
    than most tokens, for which label_room_px has room."""
    longest = min(LABEL_LIMIT_PX, text_px(labels, lettering))
    return max(0, int(np.ceil(longest + ROW_TITLE_ROOM_PX - lettering.label_room_px)))


def text_px(texts, lettering: Lettering = READING) -> float:
    """About how wide the longest of some texts is written at the lettering's font (an average character's width)."""
    return max((len(text) for text in texts), default=0) * lettering.font_px * LABEL_CHARACTER_EM


def fitted_size(width: int, cap: int | None = None, lettering: Lettering = READING) -> int:
    """The longer side of a heatmap's plot in a column width px wide: what its labels leave, at most cap (by
    default the largest plot the lettering allows)."""
    beside = LEGEND_BESIDE_PX if lettering.legend_beside else 0
    return max(MIN_PLOT_PX, min(cap or lettering.largest_plot_px, width - lettering.label_room_px - beside))
