"""A signed heatmap's outliers, clipped (heatmap.heatmap's clip_at): its colours end at ±clip_at, each cell beyond
drawn at the end colour and ringed, with its true value in the ring's tooltip, and a note in words under the chart.
The ends and the rings are data, so that a new clip_at (another layer, another head) changes no spec: the browser
swaps the numbers into the chart it drew instead of building it anew.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.colour_ranges import CLIP_QUANTILE, CLIPPED_RING, clipped_cells, robust_bound
from components.charts.draw import data_value

CLIP_PERCENT = f"{CLIP_QUANTILE * 100:g}"  # "99", as a clipped heatmap's note says it
# A clipped heatmap's datasets, its colours' ends and its clipped cells, and the parameter that reads the first
CLIP_ENDS, CLIP_RINGS, CLIP_END = "clip-ends", "clip-rings", "clip_end"


def clip_frames(matrix: np.ndarray, clip_at: float, raster: bool) -> dict[str, pd.DataFrame]:
    """A clipped heatmap's two datasets, by name: its colours' ends (±clip_at) and its clipped cells (a line each: row,
    column, value; and the cell's middle, raster: x, y), each named in its attrs (draw.named_data keeps the name)."""
    clipped = clipped_cells(np.asarray(matrix, dtype=np.float32), clip_at)  # (n, 3): row, column, value
    rings = pd.DataFrame({"row": clipped[:, 0].astype(int), "column": clipped[:, 1].astype(int),
                          "value": clipped[:, 2]})
    if raster:
        rings = rings.assign(x=rings["column"] + 0.5, y=rings["row"] + 0.5)
    ends = pd.DataFrame({"value": [-clip_at, clip_at]})
    ends.attrs["name"], rings.attrs["name"] = CLIP_ENDS, CLIP_RINGS
    return {CLIP_ENDS: ends, CLIP_RINGS: rings}


def clipped_rings(rings: pd.DataFrame, raster: bool, value_title: str) -> alt.Chart:
    """A ring round each clipped cell (rings: clip_frames'), over the cells (on their bands) or the picture (on its
    continuous axes, the cell's middle), with the cell's true value in its tooltip."""
    x, y = (alt.X("x:Q"), alt.Y("y:Q")) if raster else (alt.X("column:O"), alt.Y("row:O"))
    return alt.Chart(rings).mark_point(shape="circle", filled=False, color=CLIPPED_RING, size=30, strokeWidth=1.2,
                                       opacity=1, aria=False).encode(
        x=x, y=y, tooltip=[alt.Tooltip("value:Q", title=f"{value_title} (beyond the colour scale)", format=".4f")])


def clip_end() -> alt.Parameter:
    """The parameter holding a clipped heatmap's colour end, clip_at, read from its CLIP_ENDS dataset (its second
    row, +clip_at): written into the spec, it changed the spec at every new head, and the browser built the chart
    anew instead of swapping its numbers in. 1 until the data is there."""
    return alt.param(name=CLIP_END, expr=data_value(CLIP_ENDS, 1, "value", 1))


def clip_note(matrix: np.ndarray, clip_at: float) -> str:
    """What a clipped heatmap of matrix shows in words, under it: where its colours end (at the matrix's own
    robust_bound or not), how many cells lie beyond, and how far the largest goes."""
    clipped = clipped_cells(np.asarray(matrix, dtype=np.float32), clip_at)  # (n, 3): row, column, value
    why = f", the {CLIP_PERCENT}th percentile of |value|" if np.isclose(clip_at, robust_bound(matrix)) else ""
    if not len(clipped):
        return f"Colours end at ±{clip_at:.3g}{why}; no cell lies beyond."
    largest = float(np.abs(clipped[:, 2]).max())
    return (f"Colours end at ±{clip_at:.3g}{why}; the {len(clipped)} of {np.size(matrix)} cells beyond are ringed and "
            f"drawn at the end colours (largest |value| {largest:.3g}).")
