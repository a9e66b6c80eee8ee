"""All heads of a layer: a grid of small heatmaps, a layer × head overview, and the heads summed up.

Clicking a head in the grid, or a cell of the overview, opens that head in the "One head"
view: each chart carries an Altair point selection, and its on_select callback asks the
controls for the new view, layer and head before the page reruns.

Moving the layer slider redraws every head. The grid is one chart, faceted by head, each head a
picture of its weights: the browser then updates one view of a dozen images, where a chart per
head (12 views of 1,024 cells each) cost it 20-25 ms per head. Its spec never changes, so every
rerun hands over only the data and the browser swaps the pictures in.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from components import compute, controls
from components.charts import draw_spec, named_data, show
from components.heatmap import colour_domain, heatmap, picture_url

GRID_COLUMNS = 4
GRID_SIZE = 125  # px, the side of one small heatmap: four to a row fit the main column at 1400 px
# bert-large has 16 heads; a random source with a tiny head_dim has hundreds, shown 16 at a time.
MAX_GRID_HEADS = 16
# Above this many weights (nh·T² per layer) the overview and the summaries are not computed: ~128 MB.
MAX_LAYER_WEIGHTS = 2**25
GRID_SELECTION = "open_head"
GRID_DATA = "heads"  # the grid's dataset: one row per head shown
GRID_CORNERS = {"x": 0, "x2": 1, "y": 0, "y2": 1}  # each picture fills its cell of the grid
OVERVIEW_SELECTION = "open_cell"
# The grid (a dozen pictures) and the overview (which no layer move changes) are SVG: their heads and
# cells are elements a screen reader, and a browser test, can find.
SVG = {"embedOptions": {"renderer": "svg"}}
AGGREGATE_LABELS = {"mean": "mean of the heads", "max": "max of the heads", "rollout": "rollout up to this layer"}


def render(context) -> None:
    trace = context.trace()
    tokens = list(trace.tokens[0])
    shown = _head_window(trace.num_heads, context.state.head)
    if trace.num_heads * len(tokens) ** 2 > MAX_LAYER_WEIGHTS:
        _grid(compute.head_weights(trace, shown), shown, trace, context.state.layer)
        st.info(f"{trace.num_heads} heads × {len(tokens)}² token pairs are too many weights to sum up here: "
                "choose a larger head_dim or a shorter text for the overview and the aggregate.")
        return
    weights = compute.head_weights(trace)  # (1, nh, T, T)
    _grid(weights[:, shown], shown, trace, context.state.layer)
    _overview(context, trace.num_heads)
    _aggregate(context, weights, tokens)


def _grid(weights, shown: range, trace, layer: int) -> None:
    """weights (1, h, T, T) of the heads shown."""
    st.subheader(f"Every head of layer {layer}")
    caption = ("Each small map is one head's attention weights (rows: query tokens, columns: key tokens, "
               "in the order of the tokens above), coloured up to that head's own largest weight. Click a head "
               "to open it in the One head view.")
    if len(shown) < trace.num_heads:
        caption += (f" Showing heads {shown.start} to {shown.stop - 1} of {trace.num_heads}; "
                    "move the Head slider to see others.")
    st.caption(caption)
    summary = compute.head_summary(weights, trace["attention_mask"])
    pictures = pd.DataFrame({
        "head": list(shown),
        "picture": [picture_url(head, colour_domain(head, "blues"), "blues", side=GRID_SIZE) for head in weights[0]],
        "entropy": summary["entropy"],
        "max_weight": summary["max_weight"],
        **GRID_CORNERS,
    })
    draw_spec(compute.chart_spec(_grid_spec), {GRID_DATA: pictures}, key="grid", on_select=_open_from_grid,
              selection_mode=GRID_SELECTION)


def _grid_spec() -> dict:
    """One picture per head (a row of GRID_DATA: head, picture, entropy, max_weight and GRID_CORNERS),
    faceted GRID_COLUMNS to a row. A click selects the head; the tooltip sums it up."""
    unit = alt.Scale(domain=[0, 1], nice=False, zero=False)
    picture = alt.Chart(alt.NamedData(name=GRID_DATA)).mark_image(aspect=False, cursor="pointer").encode(
        x=alt.X("x:Q", axis=None, scale=unit), x2="x2",
        y=alt.Y("y:Q", axis=None, scale=unit), y2="y2",
        url="picture:N",
        tooltip=[alt.Tooltip("head:O", title="head (click to open)"),
                 alt.Tooltip("entropy:Q", title="mean entropy (nats)", format=".3f"),
                 alt.Tooltip("max_weight:Q", title="mean largest weight", format=".3f")],
    ).properties(width=GRID_SIZE, height=GRID_SIZE).add_params(
        alt.selection_point(name=GRID_SELECTION, fields=["head"], on="click"))
    header = alt.Header(title=None, labelExpr="'head ' + datum.value", labelFontSize=13)
    grid = picture.facet(facet=alt.Facet("head:O", header=header), columns=GRID_COLUMNS, spacing=10)
    return grid.properties(description="Attention weights of every head of the layer", usermeta=SVG).to_dict(
        validate=False)


def _head_window(num_heads: int, current_head: int) -> range:
    """At most MAX_GRID_HEADS consecutive heads, the current one among them."""
    start = min(max(0, current_head - MAX_GRID_HEADS // 2), max(0, num_heads - MAX_GRID_HEADS))
    return range(start, min(num_heads, start + MAX_GRID_HEADS))


def _overview(context, num_heads: int) -> None:
    shape = context.shape
    st.subheader("Every layer and head at a glance")
    st.caption("Mean entropy of each head's rows, in nats: low means each query looks at a few tokens, "
               "high means it spreads its attention (a uniform row over T tokens has entropy log T). "
               "Click a cell to open that layer and head.")
    # The same for every layer and head: moving either slider reads it from the cache.
    entropy = compute.entropy_by_layer(context.model_name, context.text, context.text_b, context.settings(),
                                       shape.num_layers)  # (L, nh)
    chart = heatmap(entropy, [str(layer) for layer in range(shape.num_layers)], [str(h) for h in range(num_heads)],
                    title="mean entropy (nats)", row_title="layer", column_title="head")
    clickable = isinstance(chart, alt.Chart)
    if clickable:
        chart = chart.add_params(alt.selection_point(name=OVERVIEW_SELECTION, fields=["row", "column"], on="click"))
    chart = chart.properties(usermeta=SVG)
    bare, frames = named_data(chart)
    if clickable:
        draw_spec(bare.to_dict(validate=False), frames, key="overview", on_select=_open_from_overview,
                  selection_mode=OVERVIEW_SELECTION)
    else:
        draw_spec(bare.to_dict(validate=False), frames, key="overview")
        st.caption("Too many cells to click one: choose the layer and head with the sliders.")


def _aggregate(context, weights, tokens: list[str]) -> None:
    """weights (1, nh, T, T): every head of the current layer."""
    layer = context.state.layer
    st.subheader(f"The heads of layer {layer} summed up")
    how = controls.bound_widget(st.segmented_control, "aggregate", "Aggregate across heads",
                                options=list(AGGREGATE_LABELS), format_func=AGGREGATE_LABELS.get)
    if how == "rollout":
        matrix = compute.rollout(context.model_name, context.text, context.text_b, context.settings())  # (T, T)
        title = f"Attention rollout through layers 0 to {layer}"
        caption = ("Attention rollout (Abnar & Zuidema, 2020): each layer's mean over heads, averaged half and "
                   "half with the identity for the residual connection, multiplied through layers 0 to "
                   f"{layer}. Row i says how much position i's output at layer {layer} draws on each input "
                   "token; every row sums to 1.")
    else:
        matrix = compute.aggregate_heads(weights, how)[0]  # (T, T)
        # The layer is in the subheader, not the title: the spec stays the same from layer to layer,
        # so the browser swaps the numbers in instead of building the chart again.
        title = f"{how.capitalize()} over the heads"
        caption = ("The average of all heads' weights, cell by cell: every row still sums to 1." if how == "mean" else
                   "The largest weight any head gives each (query, key) pair: shows what at least one head "
                   "attends to; rows no longer sum to 1.")
    # On a canvas, like the thumbnails: every layer move swaps its numbers. Above 64 tokens it is a layered picture.
    show(heatmap(matrix, tokens, tokens, title=title, canvas=True), key="chart-aggregate")
    st.caption(caption)


def _open_from_grid() -> None:
    picked = _picked("grid", GRID_SELECTION)
    if picked:
        controls.request(view="head", head=int(picked["head"]))


def _open_from_overview() -> None:
    picked = _picked("overview", OVERVIEW_SELECTION)
    if picked:
        controls.request(view="head", layer=int(picked["row"]), head=int(picked["column"]))


def _picked(chart_key: str, selection: str) -> dict | None:
    """The point a click selected on a chart, or None when the click cleared the selection."""
    points = st.session_state[chart_key]["selection"].get(selection) or []
    return points[0] if points else None
