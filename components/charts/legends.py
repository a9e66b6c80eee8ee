"""A chart's colour legend: under its plot and no wider than it, or beside it and no taller."""

from __future__ import annotations

import altair as alt

LEGEND_BESIDE_PX = 64  # px right of a plot that an upright legend takes, with its numbers at 15 px


def legend(plot_width: float, plot_height: float = 0, beside: bool = False) -> alt.Legend:
    """The colour legend, under the plot and no wider than it (beside it, it ran into the next column); or, beside,
    right of the plot and no taller than it (label_room.fitted_size leaves it the room)."""
    if beside:
        return alt.Legend(orient="right", direction="vertical", gradientLength=max(80, min(400, int(plot_height))),
                          offset=8)
    return alt.Legend(orient="bottom", direction="horizontal", gradientLength=max(80, min(240, int(plot_width))),
                      offset=4)
