"""The head atlas's charts, built from a table of heads (one row each: layer, head, the behaviours, label, ...):
the layer × head grid of glyphs, and the plane of heads that attend alike. Both carry a point selection a click
fills with the head's layer and head, for the view to open it.

Every text on them is data or ours: a behaviour's name reaches the chart as a column's value, never as part of
a Vega expression."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.lettering import Lettering
from components.charts.spoken_numbers import figure

OPEN_HEAD = "open_head"  # the selection a click on a glyph fills: {"layer": …, "head": …}
# Each label's colour (attention.analyses.atlas.LABELS): the looks at a neighbour or itself in hues apart, the sinks in
# browns, punctuation purple, broad a pale blue-grey and mixed grey. By label, so that a head keeps its colour on a
# model whose family lacks a label (GPT-2 has no [SEP]).
LABEL_COLOURS = {"previous": "#1f77b4", "next": "#17becf", "self": "#2ca02c", "cls": "#8c564b", "sep": "#d4a373",
                 "punct": "#9467bd", "broad": "#aec7e8", "mixed": "#9a9a9a"}
# And its shape, for a reader who cannot tell the colours apart (previous and punct are 6 ΔE apart under protanopia:
# charts/colour_vision.py): a look back points left, a look ahead right, a sink is a square or a diamond.
LABEL_SHAPES = {"previous": "triangle-left", "next": "triangle-right", "self": "circle", "cls": "square",
                "sep": "diamond", "punct": "cross", "broad": "triangle-up", "mixed": "triangle-down"}
# The plot as large as asked, its axes and legend around it: Streamlit's "fit" would squeeze a legend under the
# grid into the grid's own height.
PAD = alt.AutoSizeParams(type="pad", contains="padding")
GLYPH_PX = 30  # px a head's glyph may take at most, across
PROJECTED_GLYPH_PX = 48  # on a projector, seen from the back of a room
WIDE_PX = 480  # a column at least this wide has the legend beside the grid, else under it
MIN_GLYPH_AREA = 12  # px² of a glyph whose share is 0: still seen, and clicked
MOST_GLYPHS = 3  # the heads a text alternative names: the rest is the grid's, and its CSV's


def _tooltip(numbers: list[str]) -> list[alt.Tooltip]:
    return [alt.Tooltip("layer:O"), alt.Tooltip("head:O"), alt.Tooltip("behaviour:N", title="label"),
            *(alt.Tooltip(f"{name}:Q", format=".3f", title=title) for name, title in numbers)]


def atlas_grid(heads: pd.DataFrame, names: dict[str, str], numbers: list[tuple[str, str]], num_layers: int,
               num_heads: int, width: int, lettering: Lettering) -> alt.Chart:
    """One glyph per head, at its layer (rows) and head (columns), coloured by its label (names: each label this
    model's family has, attention.analyses.atlas.LABELS, as the page calls it; the legend lists these) and as large as
    its strength (0 to 1). numbers: the columns its hover shows, with their titles. At most width px wide."""
    beside = 240 if width >= WIDE_PX else 60  # px the layer axis and the legend (beside) take, with room to spare
    widest = (PROJECTED_GLYPH_PX if lettering.projected else GLYPH_PX) + 8
    cell = max(12, min(widest, (width - beside) // max(num_heads, 1)))  # px a head's column takes
    largest = int(0.6 * cell * cell)  # px² of a share of 1: a circle a little narrower than its column
    legend = alt.Legend(orient="right" if width >= WIDE_PX else "bottom", labelLimit=160,
                        columns=1 if width >= WIDE_PX else 2)
    return alt.Chart(heads).mark_point(filled=True, opacity=0.9).encode(
        x=alt.X("head:O", title="head", axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("layer:O", title="layer"),
        color=alt.Color("behaviour:N", title="label", scale=alt.Scale(domain=list(names.values()),
                                                                range=[LABEL_COLOURS[label] for label in names]),
                        legend=legend),
        shape=alt.Shape("behaviour:N", title="label", scale=alt.Scale(domain=list(names.values()),
                                                                range=[LABEL_SHAPES[label] for label in names]),
                        legend=legend),
        size=alt.Size("strength:Q", title="share", scale=alt.Scale(domain=[0, 1], range=[MIN_GLYPH_AREA, largest]),
                      legend=None),
        tooltip=_tooltip(numbers),
    ).add_params(
        alt.selection_point(name=OPEN_HEAD, fields=["layer", "head"], on="click"),
    ).properties(width=cell * num_heads, height=cell * num_layers, autosize=PAD)


def alike_plane(heads: pd.DataFrame, numbers: list[tuple[str, str]], num_layers: int, size: int,
                lettering: Lettering) -> alt.Chart:
    """Every head at its place (x, y) on the plane of how alike the heads attend, coloured by its layer; size px
    square, one unit as long across as up (only distances mean anything). numbers: the columns its hover shows,
    with their titles."""
    # Centred and scaled into [-1, 1], by one factor across and up: the same picture, and a spec that holds no
    # number of the data, so that another measure (the corpus, the text) swaps its points into the chart as it
    # stands instead of having Streamlit build it anew.
    low, high = heads[["x", "y"]].min(), heads[["x", "y"]].max()
    half = float((high - low).max()) / 2 * 1.05 or 1.0
    centre = (low + high) / 2
    placed = heads.assign(x=(heads["x"] - centre["x"]) / half, y=(heads["y"] - centre["y"]) / half)
    x_domain = y_domain = [-1.0, 1.0]
    return alt.Chart(placed).mark_point(filled=True, size=70, opacity=0.85, stroke="white", strokeWidth=0.5).encode(
        x=alt.X("x:Q", title=None, scale=alt.Scale(domain=x_domain, nice=False),
                axis=alt.Axis(labels=False, ticks=False, grid=False)),
        y=alt.Y("y:Q", title=None, scale=alt.Scale(domain=y_domain, nice=False),
                axis=alt.Axis(labels=False, ticks=False, grid=False)),
        color=alt.Color("layer:O", title="layer", scale=alt.Scale(scheme="viridis", domain=list(range(num_layers)))),
        tooltip=_tooltip(numbers),
    ).add_params(
        alt.selection_point(name=OPEN_HEAD, fields=["layer", "head"], on="click"),
    ).properties(width=size, height=size, autosize=PAD)


def describe_grid(heads: pd.DataFrame, names: dict[str, str], num_layers: int, num_heads: int) -> str:
    """atlas_grid's text alternative: how many heads have each label (names' order, as its legend), and the
    largest glyphs: the MOST_GLYPHS heads of largest strength, with their label and share."""
    counts = heads["label"].value_counts()
    tally = ", ".join(f"{counts[label]} {name}" for label, name in names.items() if label in counts)
    largest = heads.sort_values("strength", ascending=False, kind="stable").head(MOST_GLYPHS)
    glyphs = "; ".join(f"layer {row.layer}, head {row.head}, {row.behaviour} {figure(row.strength)}"
                       for row in largest.itertuples())
    return (f"The head atlas, {num_layers} layers × {num_heads} heads, a glyph each coloured by its label: {tally}. "
            f"Largest glyphs: {glyphs}.")


def describe_plane(heads: pd.DataFrame) -> str:
    """alike_plane's text alternative: the pairs of heads drawn closest together (they attend most alike) and the
    pair drawn farthest apart. heads: a row a head with its place, x and y."""
    places = heads[["x", "y"]].to_numpy(dtype=float)  # (H, 2)
    apart = np.linalg.norm(places[:, None] - places[None], axis=-1)  # (H, H)
    first, second = np.triu_indices(len(places), 1)  # every pair once
    order = np.argsort(apart[first, second], kind="stable")
    named = [f"layer {heads['layer'].iat[i]}, head {heads['head'].iat[i]}" for i in range(len(heads))]
    if not len(order):
        return f"Heads that attend alike: {len(heads)} head on the plane."
    closest = "; ".join(f"{named[first[k]]} and {named[second[k]]}" for k in order[:2])
    farthest = order[-1]
    return (f"Heads that attend alike: {len(heads)} heads on a plane, coloured by layer, closer where they attend "
            f"more alike. Closest: {closest}. Farthest apart: {named[first[farthest]]} and "
            f"{named[second[farthest]]}.")
