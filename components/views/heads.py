"""All heads of a layer: a grid of small heatmaps and the heads summed up, with a layer × head overview.

The grid and the summary are one chart, and its layer is picked on the chart itself: its dataset
holds every head of every layer (when they fit ALL_LAYERS_WEIGHTS), a point selection bound to a
range input above the grid picks one layer, and the grid and the summary switch at once in the
browser. Streamlit then reports the selection, and a rerun brings the heading, the URL and the side
column up to it; the chart arrives again unchanged (components/charts/scrub.py does the same for one head).
A text too long for the budget sends only the current layer: the input then asks for a rerun.

Clicking a head in the grid, or a cell of the overview, opens that head in the "One head" view:
each chart carries an Altair point selection, and its on_select callback asks the controls for the
new view, layer and head before the page reruns.

The grid is one view of a dozen pictures, placed by their data, not a facet per head: a chart per head
(12 views of 1,024 cells each) cost the browser 20-25 ms a head. Every layer's pictures stay in it and a
move only widens the picked layer's (the others are 0 px wide), and the summary's cells stay and take the
picked layer's values (components/charts/scrub.py): nothing is loaded or made anew.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from components.caches import compute
from components.charts.draw import draw_spec, show
from components.charts.heatmap import (
    MAX_VECTOR_CELLS,
    PICTURE_TOOLTIP,
    PLOT_SIZE,
    READING,
    Lettering,
    centred,
    colour_domain,
    colour_scale,
    fitted_size,
    head_domains,
    heatmap,
    label_axis,
    labelled,
    picture_url,
    plot_size,
    pooled,
    second_sentence_from,
)
from components.charts.scrub import (
    CELLS,
    INPUT_STYLE,
    LAYER,
    LEGEND,
    HeadStack,
    anchor_for,
    cells_by_head,
    filter_on,
    picked_column,
    picker,
    placed,
    report_move,
    vector_cells,
)
from components.page import controls
from components.page.downloads import chart_downloads

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
# bert-large has 16 heads; a random source with a tiny head_dim has hundreds, shown 16 at a time.
MAX_GRID_HEADS = 16
# Above this many weights (nh·T² per layer) the overview and the summaries are not computed: ~128 MB.
MAX_LAYER_WEIGHTS = 2**25
# Every layer is sent when all its heads fit (nl·nh·T² weights): 2**21 is a 170-token text on the bundled
# model (72 pictures, ~1.1 MB, and the summaries ~0.3 MB: ~1.5 MB at most; 0.3 MB at 32 tokens), 120
# tokens on bert-base. Above it only the current layer is sent, and a move of the input reruns the page.
ALL_LAYERS_WEIGHTS = 2**21
CHART_KEY = "grid"
GRID_SELECTION = "open_head"
GRID_VIEW = "grid_pictures"  # the view the layer selection belongs to (its marks are clicked to open a head)
GRID_DATA = "heads"  # the grid's dataset: one row per head shown, of every layer sent
SUMMED = "summed"  # the summary's name: its cells' dataset is summed-cells (components/charts/scrub.py)
SUMMED_PICTURES, SUMMED_RANGES = "summed_pictures", "summed_ranges"  # its datasets above MAX_VECTOR_CELLS
OVERVIEW_SELECTION = "open_cell"
# Low entropy is a focused head: drawn darkest, as the eye reads "more" (a reversed scale; the numbers stay entropy).
OVERVIEW_TITLE = "Mean entropy (nats): darker = more focused, lighter = more spread out"
GRID_COLOUR_ENDS = {"head": "each head's own largest weight", "layer": "the largest weight of any head of the layer",
                    "one": "1, the largest a weight can be"}
# One chart for the grid and the summary, drawn as SVG: its heads and cells are elements a screen
# reader, and a browser test, can find. The overview (which no layer move changes) too.
SVG = {"embedOptions": {"renderer": "svg"}}
AGGREGATE_LABELS = {"mean": "mean of the heads", "max": "max of the heads", "rollout": "rollout up to this layer"}
# The summary's title, read off the chart's own layer input (Vega names it layer_layer): the spec stays
# the same from layer to layer.
AGGREGATE_TITLES = {"mean": "'Mean of the heads of layer ' + layer_layer",
                    "max": "'Max of the heads of layer ' + layer_layer",
                    "rollout": "'Attention rollout through layers 0 to ' + layer_layer"}


def render(context) -> None:
    state = context.state
    outline = context.outline()  # the tokens and the heads: the weights come from the chart's stack
    tokens = list(outline.tokens[0])
    encoding = context.encoding()
    attention_mask = encoding.attention_mask  # (B, T)
    second = second_sentence_from(encoding.token_type_ids[0].tolist())  # sentence B's first token, if a pair
    num_layers, num_heads, pairs = context.shape.num_layers, outline.num_heads, len(tokens) ** 2
    shown = _head_window(num_heads, state.head)
    summed = num_heads * pairs <= MAX_LAYER_WEIGHTS
    layers = tuple(range(num_layers)) if num_layers * num_heads * pairs <= ALL_LAYERS_WEIGHTS else (state.layer,)
    stack = HeadStack(context.model_name, context.text, context.text_b, context.settings(layer=0, head=0), "weights",
                      layers, tuple(range(num_heads)) if summed else tuple(shown))
    st.subheader(f"Every head of layer {state.layer}", anchor=False)
    weight_scale = controls.weight_scale_select()
    caption = ("Each small map is one head's attention weights (rows: query tokens, columns: key tokens, "
               f"in the order of the tokens above), coloured from 0 (white) to {GRID_COLOUR_ENDS[weight_scale]} "
               "(darkest blue). Click a head to open it in the One head view. ")
    if len(tokens) > grid_layout(context.width, len(tokens), False, context.lettering).side:
        caption += "The text has more tokens than a small map has pixels: each pixel is the largest weight of a few. "
    if len(shown) < num_heads:
        caption += (f"Showing heads {shown.start} to {shown.stop - 1} of {num_heads}; "
                    "move the Head slider to see others. ")
    caption += ("Drag the Layer slider above the grid, or focus it and press the arrow keys: "
                + ("every layer is already in the browser." if len(layers) > 1 else
                   "this text is too long to send every layer at once, so each move fetches its layer."))
    st.caption(caption)
    labelled = controls.bound_widget(st.toggle, "grid_tokens", "Tokens beside the small maps",
                                     help="Each small map grows to write its query tokens on the left and its key "
                                          "tokens under it (every other one, or fewer, on a long text).")
    chart = st.container()  # drawn once the aggregate below it is chosen
    if not summed:
        with chart:
            _grid_and_summary(stack, shown, None, tokens, num_layers, state.layer, attention_mask,
                              context.width, weight_scale, num_heads, second, context.lettering, labelled)
        st.info(f"{num_heads} heads × {len(tokens)}² token pairs are too many weights to sum up here: "
                "choose a larger head_dim or a shorter text for the overview and the aggregate.")
        return
    # Under the chart, next to the summary it changes: the grid stays as high up the page as it can.
    how = controls.bound_widget(st.segmented_control, "aggregate", "Heads summed up by",
                                options=list(AGGREGATE_LABELS), format_func=AGGREGATE_LABELS.get,
                                wrap=True)
    st.caption(_aggregate_caption(how, state.layer, context.settings()))
    with chart:
        _grid_and_summary(stack, shown, how, tokens, num_layers, state.layer, attention_mask,
                          context.width, weight_scale, num_heads, second, context.lettering, labelled)

    def summary_chart():  # for the downloads, built on click only
        summed = _summed(stack, how)[stack.layers.index(state.layer)]  # (T, T)
        return heatmap(summed, tokens, tokens, title=f"{AGGREGATE_LABELS[how].capitalize()}, layer {state.layer}",
                       second_sentence=(second, second))

    chart_downloads(summary_chart, "heads-summary", f"{how}-of-heads-layer-{state.layer}")
    _overview(context, num_heads)


def _grid_and_summary(stack: HeadStack, shown: range, how: str | None, tokens: list[str], num_layers: int,
                      layer: int, attention_mask: np.ndarray, width: int, weight_scale: str, num_heads: int,
                      second: int | None, lettering: Lettering, labelled: bool = False) -> None:
    """The grid of the heads shown (coloured by weight_scale, over the layer's num_heads; the tokens beside each,
    when labelled) and, with how, their summary under it (sentence B marked from token `second` on): one chart,
    one layer input, in a column width px wide, its text as large as lettering says."""
    # What the chart shows, but not the layer, which moves without a new spec (one layer sent: its data swapped).
    raster = how is not None and len(tokens) ** 2 > MAX_VECTOR_CELLS
    layout = grid_layout(width, len(tokens), labelled, lettering)
    drawing = (num_layers, len(shown), len(stack.layers) > 1, how, tuple(tokens), raster, layout,
               fitted_size(width, lettering=lettering), second, lettering)
    identity = (dataclasses.replace(stack, layers=stack.layers if len(stack.layers) > 1 else ()), tuple(shown), how,
                drawing)
    anchor = anchor_for(CHART_KEY, identity, (layer, 0))[0]
    spec = placed(compute.chart_spec(_spec, *drawing), {LAYER: anchor})
    frames = compute.chart_data(_grid_frames, stack, tuple(shown), tuple(attention_mask[0].tolist()), layout,
                                weight_scale, num_heads)
    if how is not None:
        frames = {**frames, **compute.chart_data(_summary_frames, stack, how, raster)}
    st.html(INPUT_STYLE)
    draw_spec(spec, frames, key=CHART_KEY, lettering=lettering, on_select=_on_grid,
              selection_mode=[GRID_SELECTION, LAYER])


@dataclass(frozen=True)
class GridLayout:
    """Where the small heatmaps stand: side px each, `columns` to a row, a band of `band` px under each row for
    its key tokens (0: no tokens), one in every `step` tokens written."""

    side: int = GRID_SIZE
    columns: int = GRID_COLUMNS
    band: int = 0
    step: int = 1

    def place(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The x and y (px, from the grid's top left) of the pictures in the given slots."""
        return (slots % self.columns * (self.side + GRID_GAP),
                slots // self.columns * (self.side + GRID_LABEL + self.band) + GRID_LABEL)

    def size(self, slots: int) -> tuple[int, int]:
        """The grid's width and height in px, for that many pictures."""
        columns, rows = min(slots, self.columns), math.ceil(slots / self.columns)
        return columns * (self.side + GRID_GAP) - GRID_GAP, rows * (self.side + GRID_LABEL + self.band)


def grid_layout(width: int, tokens: int, labelled: bool, lettering: Lettering = READING) -> GridLayout:
    """How the grid stands in a column width px wide, beside the summary's token axis: with the text's tokens
    written beside each picture, when labelled (each picture then as large as its tokens need, up to
    LABELLED_SIDE_PX, and every step-th token written where even that is too small)."""
    font = max(lettering.font_px, 11)
    room = width - lettering.label_room_px + GRID_GAP
    # As large as the tokens need, but two to a row where the column has room for two of the smallest.
    side = min(LABELLED_SIDE_PX, math.ceil(tokens * font * TOKEN_ROOM), max(GRID_SIZE, room // 2 - GRID_GAP))
    if not labelled:  # on a projector, as large as GRID_COLUMNS to a row allow: 110 px is lost at the back of a room
        side = min(LABELLED_SIDE_PX, room // GRID_COLUMNS - GRID_GAP) if lettering.projected else GRID_SIZE
    side = max(GRID_SIZE, side)
    columns = max(1, min(GRID_COLUMNS, room // (side + GRID_GAP)))
    if not labelled:
        return GridLayout(side, columns)
    return GridLayout(side, columns, TOKEN_BAND_PX, max(1, math.ceil(tokens * font * TOKEN_ROOM / side)))


def _grid_frames(stack: HeadStack, shown: tuple[int, ...], attention_mask: tuple[int, ...],
                 layout: GridLayout = GridLayout(), weight_scale: str = "head", num_heads: int = 0
                 ) -> dict[str, pd.DataFrame]:
    """One row per head shown of every layer sent: its picture (coloured by weight_scale, a layer's largest
    weight read over its num_heads), its summary for the tooltip, its place in the grid (layout)."""
    every_head = stack.values()  # (nl, heads of the stack, T, T)
    picked = [stack.heads.index(head) for head in shown]
    weights = every_head if picked == list(range(len(stack.heads))) else every_head[:, picked]  # (nl, h, T, T)
    if weight_scale == "layer" and len(stack.heads) < num_heads:
        every_head = stack.with_heads(tuple(range(num_heads))).values()
    domains = head_domains(weights, "blues", weight_scale, every_head)  # (nl, h, 2)
    mask = np.asarray([attention_mask])  # (1, T)
    x, y = layout.place(np.arange(len(shown)))
    rows = []
    for layer, heads, ends in zip(stack.layers, weights, domains, strict=True):  # (h, T, T), (h, 2)
        summary = compute.head_summary(heads[None], mask)
        rows.append(pd.DataFrame({
            LAYER: layer,
            "head": list(shown),
            "picture": [picture_url(pooled(head, layout.side), domain.tolist(), "blues", side=layout.side)
                        for head, domain in zip(heads, ends, strict=True)],
            "entropy": summary["entropy"],
            "max_weight": summary["max_weight"],
            "x": x, "x2": x + layout.side, "y": y, "y2": y + layout.side,
        }))
    return {GRID_DATA: pd.concat(rows, ignore_index=True)}


def _summed(stack: HeadStack, how: str) -> np.ndarray:
    """(nl, T, T): every layer of the stack, its heads summed up by how."""
    if how == "rollout":
        return compute.rollout_by_layer(stack.model, stack.text, stack.text_b, stack.settings, stack.layers)
    return compute.aggregate_heads(stack.values(), how)


def _summary_frames(stack: HeadStack, how: str, raster: bool) -> dict[str, pd.DataFrame]:
    """Every layer sent summed up: one line per cell (row, column, then its value in every layer sent, in
    columns "0", "1", …), or above MAX_VECTOR_CELLS a picture per layer and its colour range for the legend."""
    matrices = _summed(stack, how)  # (nl, T, T)
    layers, tokens = matrices.shape[:2]
    if raster:
        domains = [colour_domain(matrix, "blues") for matrix in matrices]
        return {
            SUMMED_PICTURES: pd.DataFrame({LAYER: stack.layers, "x": 0, "x2": tokens, "y": 0, "y2": tokens,
                                           "url": [picture_url(matrix, domain, "blues")
                                                   for matrix, domain in zip(matrices, domains, strict=True)]}),
            SUMMED_RANGES: pd.DataFrame({LAYER: np.repeat(stack.layers, 2), "value": np.ravel(domains)}),
        }
    return {f"{SUMMED}-{CELLS}": cells_by_head(matrices[:, None])}  # (T·T, 2 + nl): a column per layer sent


def _spec(num_layers: int, slots: int, many_layers: bool, how: str | None, tokens: tuple[str, ...],
          raster: bool, layout: GridLayout = GridLayout(), size: int = PLOT_SIZE, second: int | None = None,
          lettering: Lettering = READING) -> dict:
    """The grid of `slots` heads as layout places them (the tokens beside each, when it has room for them), and,
    with how, their summary (its plot size px, sentence B marked from token `second` on) under it; the layer
    picked by an input."""
    layer = picker(LAYER, "Layer", num_layers)
    picks = [layer] if many_layers else []  # one layer sent: no filter, the input asks for a rerun
    parts = [_grid(slots, layer, picks, layout, max(GRID_LABEL_FONT_PX, lettering.font_px),
                   tokens if layout.band else (), max(11, lettering.font_px))]
    if how is not None:
        parts.append(_summary(tokens, how, raster, picks, size, lettering.label_spacing_px, second))
    chart = alt.vconcat(*parts, spacing=28) if len(parts) > 1 else parts[0]
    # Altair lifts the selections to the top, naming the view they belong to: the grid's pictures.
    return chart.properties(description="Attention weights of every head of the layer, and the heads summed up",
                            autosize=alt.AutoSizeParams(type="pad"), usermeta=SVG).to_dict(validate=False)


def _grid(slots: int, layer: alt.Parameter, picks: list, layout: GridLayout, label_px: float,
          tokens: tuple[str, ...] = (), token_px: float = 11) -> alt.LayerChart:
    """One picture per head (a row of GRID_DATA: layer, head, picture, entropy, max_weight and its place), as
    layout places them, each under its "head N" (label_px high), with the tokens beside it when given (token_px
    high). A click selects the head; the tooltip sums it up."""
    width, height = layout.size(slots)
    x = alt.Scale(domain=[0, width], nice=False, zero=False)
    y = alt.Scale(domain=[0, height], nice=False, zero=False, reverse=True)
    base = alt.Chart(alt.NamedData(name=GRID_DATA))
    # Every layer's pictures stay drawn; those of the layers not picked are 0 px wide. A filter would make
    # the browser load the new layer's pictures anew on every move, and paint the grid empty meanwhile.
    shown = " && ".join(filter_on(pick) for pick in picks) or "true"
    pictures = base.transform_calculate(right=f"{shown} ? datum.x2 : datum.x").mark_image(
        aspect=False, cursor="pointer").encode(
        x=alt.X("x:Q", axis=None, scale=x), x2="right",
        y=alt.Y("y:Q", axis=None, scale=y), y2="y2",
        url="picture:N",
        tooltip=[alt.Tooltip("head:O", title="head (click to open)"),
                 alt.Tooltip("entropy:Q", title="mean entropy (nats)", format=".3f"),
                 alt.Tooltip("max_weight:Q", title="mean largest weight", format=".3f")],
    ).add_params(alt.selection_point(name=GRID_SELECTION, fields=["head"], on="click"), layer).properties(
        name=GRID_VIEW)
    # One label per place in the grid, whatever the layer: the labels need not move with it.
    labels = base.transform_aggregate(groupby=["head", "x", "x2", "y"]).transform_calculate(
        centre="(datum.x + datum.x2) / 2", label="'head ' + datum.head").mark_text(
        baseline="bottom", dy=-4, fontSize=label_px).encode(x=alt.X("centre:Q", axis=None, scale=x),
                                                      y=alt.Y("y:Q", axis=None, scale=y), text="label:N")
    parts = [pictures, labels, *(_grid_tokens(slots, layout, tokens, token_px, x, y) if tokens else ())]
    return alt.layer(*parts).properties(width=width, height=height)


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


def _summary(tokens: tuple[str, ...], how: str, raster: bool, picks: list, size: int, spacing_px: int,
             second: int | None = None) -> alt.Chart | alt.LayerChart:
    """Every layer's heads summed up (SUMMED: one line per cell, a column per layer; SUMMED_PICTURES and
    SUMMED_RANGES above MAX_VECTOR_CELLS), the picked layer shown, with its tokens on both axes (labels no
    closer than spacing_px)."""
    count = len(tokens)
    width, height = plot_size(count, count, size)
    x_axis = label_axis(list(tokens), "key token", count, angle=-60, length_px=width, spacing_px=spacing_px,
                        second_from=second)
    y_axis = label_axis(list(tokens), "query token", count, angle=0, length_px=height, spacing_px=spacing_px,
                        second_from=second)
    colour = colour_scale("blues")
    if raster:
        picture = alt.Chart(alt.NamedData(name=SUMMED_PICTURES)).mark_image(aspect=False)
        carrier = alt.Chart(alt.NamedData(name=SUMMED_RANGES)).mark_point(opacity=0)
        for pick in picks:
            picture, carrier = picture.transform_filter(filter_on(pick)), carrier.transform_filter(filter_on(pick))
        picture = picture.encode(
            x=alt.X("x:Q", axis=centred(x_axis), scale=alt.Scale(domain=[0, count], nice=False, zero=False)),
            x2="x2",
            y=alt.Y("y:Q", axis=centred(y_axis), scale=alt.Scale(domain=[0, count], nice=False, reverse=True)),
            y2="y2", url="url:N", tooltip=alt.value(PICTURE_TOOLTIP))
        chart = labelled(alt.layer(picture, carrier.encode(color=alt.Color("value:Q", scale=colour, title=None,
                                                                           legend=LEGEND))), tokens)
    else:
        chart = vector_cells(SUMMED, tokens, tokens, x_axis, y_axis, colour, AGGREGATE_LABELS[how], [],
                             picked_column(picks, heads_sent=1), (width / count, height / count))
    return chart.properties(title=alt.TitleParams(text=alt.ExprRef(AGGREGATE_TITLES[how]), anchor="start"),
                            width=width, height=height)


def _aggregate_caption(how: str, layer: int, settings) -> str:
    if how == "rollout":
        model_own = settings.source == "bert" and settings.scaling == "sqrt"
        return ("Attention rollout (Abnar & Zuidema, 2020): each layer's mean over heads, averaged half and half "
                "with the identity for the residual connection, multiplied through layers 0 to "
                f"{layer}. Row i says how much position i's output at layer {layer} draws on each input "
                "token; every row sums to 1. "
                + ("It uses the model's own weights (source bert, scaling √d_k), as the paper does."
                   if model_own else
                   f"It follows the source ({settings.source}) and the scaling "
                   f"({controls.SCALING_LABELS[settings.scaling]}) chosen beside this view, in every layer, so it "
                   "differs from the model's own rollout (source bert, √d_k)."))
    if how == "mean":
        return "The average of all heads' weights, cell by cell: every row still sums to 1."
    return ("The largest weight any head gives each (query, key) pair: shows what at least one head "
            "attends to; rows no longer sum to 1.")


def _head_window(num_heads: int, current_head: int) -> range:
    """At most MAX_GRID_HEADS consecutive heads, the current one among them."""
    start = min(max(0, current_head - MAX_GRID_HEADS // 2), max(0, num_heads - MAX_GRID_HEADS))
    return range(start, min(num_heads, start + MAX_GRID_HEADS))


def _overview(context, num_heads: int) -> None:
    shape = context.shape
    st.subheader("Every layer and head at a glance")
    st.caption("Mean entropy of each head's rows, in nats: low means each query looks at a few tokens, "
               "high means it spreads its attention (a uniform row over T tokens has entropy log T). "
               "The darker a cell, the more focused its head: entropy 0 is the darkest blue. "
               "Click a cell to open that layer and head.")
    # The same for every layer and head: moving either slider reads it from the cache.
    entropy = compute.entropy_by_layer(context.model_name, context.text, context.text_b, context.settings(),
                                       shape.num_layers)  # (L, nh)
    chart = heatmap(entropy, [str(layer) for layer in range(shape.num_layers)], [str(h) for h in range(num_heads)],
                    title=OVERVIEW_TITLE, row_title="layer", column_title="head",
                    size=context.plot_px(), reverse=True, lettering=context.lettering)
    clickable = isinstance(chart, alt.Chart)
    if clickable:
        chart = chart.add_params(alt.selection_point(name=OVERVIEW_SELECTION, fields=["row", "column"], on="click"))
    chart = chart.properties(usermeta=SVG)
    if clickable:
        show(chart, key="overview", lettering=context.lettering, on_select=_open_from_overview,
             selection_mode=OVERVIEW_SELECTION)
    else:
        show(chart, key="overview", lettering=context.lettering)
        st.caption("Too many cells to click one: choose the layer and head with the sliders.")


def _on_grid() -> None:
    """The grid's layer input moved (the rest of the page follows), or a head was clicked (it opens, at the
    layer the chart shows)."""
    opened = _picked(CHART_KEY, GRID_SELECTION)
    report_move(CHART_KEY, lambda layer, _head: controls.request(layer=layer))
    if opened:
        controls.request(view="head", head=int(opened["head"]))


def _open_from_overview() -> None:
    picked = _picked("overview", OVERVIEW_SELECTION)
    if picked:
        controls.request(view="head", layer=int(picked["row"]), head=int(picked["column"]))


def _picked(chart_key: str, selection: str) -> dict | None:
    """The point a click selected on a chart, or None when the click cleared the selection."""
    points = st.session_state[chart_key]["selection"].get(selection) or []
    return points[0] if points else None
