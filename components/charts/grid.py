"""The all-heads view's chart: a grid of small heatmaps, one picture per head, and under it the heads summed up
(mean, max or rollout), with one layer input for both. Built from numbers: the view hands in the weights.

The grid is one view of a dozen pictures, placed by their data, not a facet per head: a chart per head
cost the browser a view each.

Under grouped-query attention (a Llama's query heads sharing fewer key/value heads) each head's title names its
key/value head ("head 4 · kv 1"), and the heads of one group stand together on a band of its own shade: a row
each, or several to a row with a gap between them, where the column has room for a group; else one after another,
the shades alternating from group to group.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from components.charts.colour_ranges import head_domains
from components.charts.draw import data_value, naming_layer, one_row
from components.charts.heatmap import (
    CELLS,
    LAYER,
    PICTURES,
    RANGES,
    filter_on,
    heatmap_panel,
    named,
    picked,
    pixel_scales,
    placed_picture,
    placed_pictures,
)
from components.charts.lettering import READING, Lettering
from components.charts.plot_sizes import PLOT_SIZE
from components.charts.scrub import LEGEND, panel_frames, picker

GRID_COLUMNS = 4  # at most; fewer in a narrow column (grid_columns)
# px, the side of one small heatmap: four to a row, moved right by the summary's token axis (the chart's
# parts share their left edge), fit the main column (570 px) of a 1366-px screen.
GRID_SIZE = 110
GRID_GAP = 10  # px between two pictures
GRID_LABEL = 20  # px above each picture for its "head N"
GRID_LABEL_FONT_PX = 13  # its text, at least
# With the tokens written beside them (grid_tokens=1): a picture grows to give each token this many px per font
# px, up to LABELLED_SIDE_PX; under each row of pictures, a band for its key tokens, slanted as an axis's.
TOKEN_ROOM = 1.25
LABELLED_SIDE_PX = 260
TOKEN_BAND_PX = 58
TOKEN_LIMIT_PX = 60  # a token's label is cut at this length
# Under grouped-query attention: px between two groups' pictures (besides GRID_GAP), the band round a group's
# pictures (px beyond them at the sides and under them; above, its titles), and its shades, alternating by group:
# pale greys of two hues, behind the pictures' white-to-blue, not in it.
GROUP_GAP = 16
GROUP_PAD = GRID_GAP // 2
GROUP_SHADES = ("#e6ebf2", "#f2ece0")
GRID_SELECTION = "open_head"
FOCUS = "focused_head"  # the parameter holding the side column's head, ringed in the grid
FOCUS_DATA = "grid-focus"  # the dataset it reads that head from
FOCUS_COLOUR = "#d62728"  # its ring: red, apart from the blues of the pictures
GRID_VIEW = "grid_pictures"  # the view the layer selection belongs to (its marks are clicked to open a head)
GRID_DATA = "heads"  # the grid's dataset: one row per head shown, of every layer sent
SUMMED = "summed"  # the summary's name: its datasets are summed-cells, or summed-pictures and summed-ranges
# One chart for the grid and the summary, drawn as SVG: its heads and cells are elements a screen
# reader, and a browser test, can find. The overview (which no layer move changes) too.
SVG = {"embedOptions": {"renderer": "svg"}}
# The summary's title: its words from a dataset (aggregate_frames), its layer off the chart's own layer selection, so
# that the spec stays the same from layer to layer and from one way of summing the heads up to another.
AGGREGATE_DATA = "grid-aggregate"
AGGREGATE_LEADS = {"mean": "Mean of the heads of layer ", "max": "Max of the heads of layer ",
                   "rollout": "Attention rollout through layers 0 to "}
AGGREGATE_TITLE = f"({data_value(AGGREGATE_DATA, 0, 'lead', repr(''))}) + {picked(LAYER)}"


@dataclass(frozen=True)
class GridLayout:
    """Where the small heatmaps stand: side px each, `columns` to a row, a band of `band` px under each row for
    its key tokens (0: no tokens), one in every `step` tokens written. group: how many query heads share each
    key/value head (1: none share), lead: where the first head shown stands in its group (its number mod group)."""

    side: int = GRID_SIZE
    columns: int = GRID_COLUMNS
    band: int = 0
    step: int = 1
    group: int = 1
    lead: int = 0

    @property
    def grouped(self) -> bool:
        """Whether each row holds whole groups of heads sharing a key/value head, a gap between two."""
        return 1 < self.group <= self.columns

    def place(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The x and y (px, from the grid's top left) of the pictures in the given slots."""
        if not self.grouped:
            return (slots % self.columns * (self.side + GRID_GAP),
                    slots // self.columns * (self.side + GRID_LABEL + self.band) + GRID_LABEL)
        heads = slots + self.lead  # counted from the first shown head's group
        groups, per_row = heads // self.group, self.columns // self.group
        column = groups % per_row * self.group + heads % self.group
        return (column * (self.side + GRID_GAP) + groups % per_row * GROUP_GAP + GROUP_PAD,
                groups // per_row * (self.side + GRID_LABEL + self.band + GROUP_GAP) + GRID_LABEL)

    def size(self, slots: int) -> tuple[int, int]:
        """The grid's width and height in px, for that many pictures."""
        x, y = self.place(np.arange(slots))
        bands = GROUP_PAD if self.grouped else 0  # the bands' sides, and under the last row
        return int(x.max()) + self.side + bands, int(y.max()) + self.side + self.band + bands

def grid_layout(width: int, tokens: int, labelled: bool, lettering: Lettering = READING, group: int = 1,
                first: int = 0) -> GridLayout:
    """How the grid stands in a column width px wide, beside the summary's token axis: with the text's tokens
    written beside each picture, when labelled (each picture then as large as its tokens need, up to
    LABELLED_SIDE_PX, and every step-th token written where even that is too small). group: query heads sharing
    each key/value head, whose groups a row holds whole where it has room (first: the first head shown)."""
    font = max(lettering.font_px, 11)
    room = width - lettering.label_room_px + GRID_GAP
    # As large as the tokens need, but two to a row where the column has room for two of the smallest.
    side = min(LABELLED_SIDE_PX, math.ceil(tokens * font * TOKEN_ROOM), max(GRID_SIZE, room // 2 - GRID_GAP))
    if not labelled:  # on a projector, as large as GRID_COLUMNS to a row allow: 110 px is lost at the back of a room
        side = min(LABELLED_SIDE_PX, room // GRID_COLUMNS - GRID_GAP) if lettering.projected else GRID_SIZE
    side = max(GRID_SIZE, side)
    columns = max(1, min(GRID_COLUMNS, room // (side + GRID_GAP)))
    if group > 1:  # whole groups to a row, where one fits, with their gaps and their bands' sides
        per_row = max(0, min(GRID_COLUMNS // group, (room - GRID_GAP + GROUP_GAP) // (group * (side + GRID_GAP)
                                                                                     + GROUP_GAP)))
        columns = per_row * group or columns
    band, step = (TOKEN_BAND_PX, max(1, math.ceil(tokens * font * TOKEN_ROOM / side))) if labelled else (0, 1)
    return GridLayout(side, columns, band, step, group, first % group)

def spec(num_layers: int, slots: int, many_layers: bool, summed: bool, tokens: tuple[str, ...],
          raster: bool, layout: GridLayout = GridLayout(), size: int = PLOT_SIZE, second: int | None = None,
          lettering: Lettering = READING, unit: str = "token") -> dict:
    """The grid of `slots` heads as layout places them (the tokens beside each, when it has room for them), and,
    when summed, their summary (its plot size px, sentence B marked from token `second` on) under it, summed up as
    aggregate_frames says; the layer picked by an input. unit: what the summary's rows and columns are, a token or
    a (whole) word."""
    layer = picker(LAYER, "Layer", num_layers)
    picks = [layer] if many_layers else []  # one layer sent: no filter, the input asks for a rerun
    parts = [_grid(slots, layer, picks, layout, max(GRID_LABEL_FONT_PX, lettering.font_px),
                   tokens if layout.band else (), max(11, lettering.font_px), (AGGREGATE_DATA,) if summed else ())]
    if summed:
        parts.append(_summary(tokens, raster, picks, size, lettering, second, unit))
    chart = alt.vconcat(*parts, spacing=28) if len(parts) > 1 else parts[0]
    # Altair lifts the selections to the top, naming the view they belong to: the grid's pictures.
    return chart.properties(description="Attention weights of every head of the layer, and the heads summed up",
                            autosize=alt.AutoSizeParams(type="pad"), usermeta=SVG).to_dict(validate=False)

def _grid(slots: int, layer: alt.Parameter, picks: list, layout: GridLayout, label_px: float,
          tokens: tuple[str, ...] = (), token_px: float = 11, read: tuple[str, ...] = ()) -> alt.LayerChart:
    """One picture per head (a row of GRID_DATA: layer, head, title, picture, entropy, max_weight and its place;
    under grouped-query attention kv, its key/value head), as layout places them, each under its title ("head N",
    label_px high), the heads sharing a key/value head on a band, with the tokens beside it when given (token_px
    high). A click selects the head; the tooltip sums it up. read: datasets an expression of the chart reads (the
    summary's title), kept in the spec."""
    width, height = layout.size(slots)
    x, y = pixel_scales(width, height)
    base = alt.Chart(alt.NamedData(name=GRID_DATA))
    # Every layer's pictures stay drawn; those of the layers not picked are 0 px wide (heatmap.placed_pictures).
    shown = " && ".join(filter_on(pick) for pick in picks) or "true"
    pictures = placed_pictures(base, x, y, shown, [
        alt.Tooltip("head:O", title="head (click to open)"),
        alt.Tooltip("entropy:Q", title="mean entropy (nats)", format=".3f"),
        alt.Tooltip("max_weight:Q", title="mean largest weight", format=".3f")], cursor="pointer").add_params(
        alt.selection_point(name=GRID_SELECTION, fields=["head"], on="click"), layer).properties(name=GRID_VIEW)
    # One label per place in the grid, whatever the layer: the labels need not move with it.
    labels = base.transform_aggregate(groupby=["head", "title", "x", "x2", "y"]).transform_calculate(
        centre="(datum.x + datum.x2) / 2").mark_text(
        baseline="bottom", dy=-4, fontSize=label_px).encode(x=alt.X("centre:Q", axis=None, scale=x),
                                                      y=alt.Y("y:Q", axis=None, scale=y), text="title:N")
    # The side column's head, ringed: the Head slider beside the view moved nothing a learner could see. Its number
    # is data (focus_frames), read by a parameter: written into the spec, each head was a chart built anew.
    focus = alt.param(name=FOCUS, expr=data_value(FOCUS_DATA, 0, "head", 0))
    ring = base.transform_filter(f"{shown} && datum.head == {FOCUS}").mark_rect(
        filled=False, stroke=FOCUS_COLOUR, strokeWidth=3, aria=False).encode(
        x=alt.X("x:Q", axis=None, scale=x), x2="x2", y=alt.Y("y:Q", axis=None, scale=y), y2="y2",
        tooltip=alt.value(None)).add_params(focus)
    parts = [pictures, labels, ring, *(naming_layer(name, aria=False) for name in (FOCUS_DATA, *read)),
             *(_grid_tokens(slots, layout, tokens, token_px, x, y) if tokens else ())]
    if layout.group > 1:
        parts.insert(0, _group_bands(base, layout, width, x, y))
    return alt.layer(*parts).properties(width=width, height=height)


def _group_bands(base: alt.Chart, layout: GridLayout, width: int, x: alt.Scale, y: alt.Scale) -> alt.Chart:
    """Behind the pictures, a band round each row of a group's pictures and their titles, shaded by its key/value
    head (GROUP_SHADES, alternating): drawn once per place, whatever the layer, as the titles are. Groups one after
    another (not layout.grouped) have no room of their own at the grid's sides: their bands stop at its edges, and
    the bands of two groups in a row meet halfway between their pictures, as those of a group's rows meet."""
    below = layout.band + (GROUP_PAD if layout.grouped else 0)
    return base.transform_aggregate(left="min(x)", right="max(x2)", top="min(y)", bottom="max(y2)",
                                    groupby=["kv", "y"]).transform_calculate(
        left=f"max(datum.left - {GROUP_PAD}, 0)", right=f"min(datum.right + {GROUP_PAD}, {width})",
        top=f"datum.top - {GRID_LABEL}",
        bottom=f"datum.bottom + {below}").mark_rect(aria=False).encode(
        x=alt.X("left:Q", axis=None, scale=x), x2="right", y=alt.Y("top:Q", axis=None, scale=y), y2="bottom",
        fill=alt.condition("datum.kv % 2 == 0", alt.value(GROUP_SHADES[0]), alt.value(GROUP_SHADES[1])),
        tooltip=alt.value(None))


def focus_frames(head: int) -> dict[str, pd.DataFrame]:
    """The grid's dataset of the head it rings (the side column's), by name, for draw_spec beside its own."""
    return one_row(FOCUS_DATA, head=int(head))


def aggregate_frames(how: str) -> dict[str, pd.DataFrame]:
    """The dataset of how the summary sums the heads up (one of AGGREGATES), which its title reads, by name."""
    return one_row(AGGREGATE_DATA, lead=AGGREGATE_LEADS[how])

def _grid_tokens(slots: int, layout: GridLayout, tokens: tuple[str, ...], font_px: float, x: alt.Scale,
                 y: alt.Scale) -> tuple[alt.Chart, alt.Chart]:
    """The query tokens left of each row of pictures, and the key tokens under each picture, slanted: every
    layout.step-th token, in the middle of its row or column of cells."""
    cell = layout.side / len(tokens)
    lefts, tops = layout.place(np.arange(slots))
    written = range(0, len(tokens), layout.step)
    rows = [{"x": -4.0, "y": float(top) + (i + 0.5) * cell, "token": tokens[i]}
            for top in sorted(set(tops.tolist())) for i in written]
    columns = [{"x": float(left) + (i + 0.5) * cell, "y": float(top + layout.side) + 3, "token": tokens[i]}
               for left, top in zip(lefts.tolist(), tops.tolist(), strict=True) for i in written]
    text = {"fontSize": font_px, "limit": TOKEN_LIMIT_PX, "aria": False}
    query = alt.Chart(alt.Data(values=rows)).mark_text(align="right", baseline="middle", **text)
    key = alt.Chart(alt.Data(values=columns)).mark_text(align="right", baseline="middle", angle=300, **text)
    return tuple(chart.encode(x=alt.X("x:Q", axis=None, scale=x), y=alt.Y("y:Q", axis=None, scale=y),
                              text="token:N") for chart in (query, key))


def _summary(tokens: tuple[str, ...], raster: bool, picks: list, size: int, lettering: Lettering,
             second: int | None = None, unit: str = "token") -> alt.Chart | alt.LayerChart:
    """Every layer's heads summed up, drawn as a scrubbed panel named SUMMED is (summary_frames), the picked layer
    shown, with its tokens on both axes (labels as close as the lettering allows), under a title naming how they
    are summed up (aggregate_frames) and the layer."""
    heading = alt.TitleParams(text=alt.ExprRef(AGGREGATE_TITLE), anchor="start")
    return heatmap_panel(named(SUMMED, PICTURES if raster else CELLS), named(SUMMED, RANGES), raster, tokens, tokens,
                         title=heading, value_title="weight", row_title=f"query {unit}",
                         column_title=f"key {unit}", size=size, lettering=lettering, second=(second, second),
                         picks=picks, key=LEGEND)


def grid_frames(weights: np.ndarray, layers: tuple[int, ...], shown: tuple[int, ...], summaries: list[dict],
                layout: GridLayout = GridLayout(), weight_scale: str = "head", layer_values: np.ndarray | None = None
                ) -> dict[str, pd.DataFrame]:
    """One row per head shown (weights (nl, h, T, T): the shown heads of the layers sent) of every layer sent: its
    picture (coloured by weight_scale, a layer's largest weight read over layer_values, its every head), its
    summary for the tooltip (summaries: per layer, {"entropy", "max_weight"} of its heads shown), its place in the
    grid (layout), its title, and under grouped-query attention (layout.group > 1) its key/value head."""
    domains = head_domains(weights, "blues", weight_scale, layer_values, weights=True)  # (nl, h, 2)
    x, y = layout.place(np.arange(len(shown)))
    shared = {head: {"kv": head // layout.group} for head in shown} if layout.group > 1 else {}
    rows = [{LAYER: layer, "head": head, "title": head_title(head, layout.group),
             **shared.get(head, {}), "entropy": entropy, "max_weight": max_weight,
             **placed_picture(matrix, domain, left, top, layout.side)}
            for layer, heads, ends, summary in zip(layers, weights, domains, summaries, strict=True)  # (h, T, T)
            for head, matrix, domain, entropy, max_weight, left, top in zip(
                shown, heads, ends, summary["entropy"], summary["max_weight"], x, y, strict=True)]
    return {GRID_DATA: pd.DataFrame(rows)}


def head_title(head: int, group: int = 1) -> str:
    """A small map's title: "head 4", or under grouped-query attention (group query heads to a key/value head) with
    the key/value head it reads, "head 4 · kv 1"."""
    return f"head {head} · kv {head // group}" if group > 1 else f"head {head}"


def summary_frames(summed: np.ndarray, layers: tuple[int, ...], raster: bool) -> dict[str, pd.DataFrame]:
    """Every layer sent summed up (summed (nl, T, T)), as a scrubbed panel named SUMMED holds it: one line per cell
    and a column per layer, or above MAX_VECTOR_CELLS a picture per layer and its colour range for the legend."""
    return panel_frames(summed[:, None], layers, (0,), "blues", raster, SUMMED, weights=True)
