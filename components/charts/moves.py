"""What a head moves, beside how much it looks: where a layer's attention parks (the sink tokens, punctuation), by
weight and by what moves. (The ‖f(x_j)‖ bars under the Moves heatmap are part of its own chart: scrub.spec's
strip.) Built from numbers; the tokens and places reach the chart as data (token_axes.label_axis reads a parameter,
never a token written into an expression).
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.draw import spec_and_frames
from components.charts.lettering import READING, Lettering
from components.charts.plot_sizes import LABEL_PX

PARK_MEASURES = ("by weight α", "by what moves α·‖f(x)‖")  # the park chart's two panels, in this order
PARK_HEIGHT_PX = 160
# The plot as large as width and height say, its axes and title around it: Streamlit's default fits the whole chart,
# axes and all, into them, and left a strip of bars 0 px high.
PAD = alt.AutoSizeParams(type="pad")


def park_frame(places: tuple[str, ...], weight: np.ndarray, moved: np.ndarray) -> pd.DataFrame:
    """(L, P) shares by weight and by what moves -> one row per (measure, layer, place)."""
    rows = [{"measure": measure, "layer": layer, "place": place, "share": float(shares[layer, index])}
            for measure, shares in zip(PARK_MEASURES, (weight, moved), strict=True)
            for layer in range(shares.shape[0]) for index, place in enumerate(places)]
    return pd.DataFrame(rows, columns=["measure", "layer", "place", "share"])


def park_chart(places: tuple[str, ...], weight: np.ndarray, moved: np.ndarray, *, width: int,
               lettering: Lettering = READING) -> alt.FacetChart:
    """Every layer's share of all its heads' attention on each place (bars side by side), by weight and by what
    moves: two panels on one share axis, side by side in a column width px wide (one under the other when it is
    narrow). places: their names, as data."""
    side_by_side = width >= LABEL_PX + 2 * 220
    panel_px = max(140, (width - LABEL_PX) // 2 - 40 if side_by_side else width - LABEL_PX)
    base = alt.Chart(park_frame(places, weight, moved)).mark_bar().encode(
        x=alt.X("layer:O", title="layer", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("place:N", sort=list(places)),
        y=alt.Y("share:Q", title="share", axis=alt.Axis(format="%", tickCount=4),
                # One axis for both panels, from 0 to the largest share or 10 %: the data's, found by Vega; written
                # into the spec, a new layer or scaling built the chart anew instead of swapping its bars in.
                scale=alt.Scale(domain=alt.DomainUnionWith(unionWith=[0, 0.1]), nice=False)),
        color=alt.Color("place:N", sort=list(places), title="parked on", legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("measure:N"), alt.Tooltip("layer:O"), alt.Tooltip("place:N", title="parked on"),
                 alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=panel_px, height=PARK_HEIGHT_PX)
    facet = alt.Facet("measure:N", sort=list(PARK_MEASURES), title=None,
                      header=alt.Header(labelFontSize=max(13, lettering.font_px), labelFontWeight="bold",
                                        labelAngle=0, labelOrient="top", labelAnchor="start"))
    faceted = base.facet(column=facet) if side_by_side else base.facet(row=facet)
    return faceted.properties(autosize=PAD)


def park_spec(places: tuple[str, ...], width: int, lettering: Lettering = READING) -> dict:
    """park_chart's spec, the same for every text, layer count, scaling and mask: its one dataset ("data-0",
    park_frame's) is sent beside it."""
    no_shares = np.zeros((0, len(places)))  # (L, P): no layer at all
    return spec_and_frames(park_chart(places, no_shares, no_shares, width=width, lettering=lettering))[0]
