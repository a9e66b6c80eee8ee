"""All heads of a layer: a grid of small heatmaps, a layer × head overview, and the heads summed up.

Clicking a head in the grid, or a cell of the overview, opens that head in the "One head"
view: each chart carries an Altair point selection, and its on_select callback asks the
controls for the new view, layer and head before the page reruns.
"""

from __future__ import annotations

import functools

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from attention.heads import aggregate_heads, head_summary, head_weights, rollout
from components import controls
from components.charts import show
from components.heatmap import heatmap

GRID_COLUMNS = 4
GRID_SIZE = 170  # px, the side of one small heatmap
# bert-large has 16 heads; a random source with a tiny head_dim has hundreds, shown 16 at a time.
MAX_GRID_HEADS = 16
# Above this many weights (nh·T² per layer) the overview and the summaries are not computed: ~128 MB.
MAX_LAYER_WEIGHTS = 2**25
GRID_SELECTION = "open_head"
OVERVIEW_SELECTION = "open_cell"
AGGREGATE_LABELS = {"mean": "mean of the heads", "max": "max of the heads", "rollout": "rollout up to this layer"}


def render(context) -> None:
    trace = context.trace()
    tokens = list(trace.tokens[0])
    shown = _head_window(trace.num_heads, context.state.head)
    if trace.num_heads * len(tokens) ** 2 > MAX_LAYER_WEIGHTS:
        _grid(head_weights(trace, shown), shown, trace, tokens, context.state.layer)
        st.info(f"{trace.num_heads} heads × {len(tokens)}² token pairs are too many weights to sum up here: "
                "choose a larger head_dim or a shorter text for the overview and the aggregate.")
        return
    weights = head_weights(trace)  # (1, nh, T, T)
    _grid(weights[:, shown], shown, trace, tokens, context.state.layer)
    _overview(context, trace.num_heads)
    _aggregate(context, weights, tokens)


def _grid(weights, shown: range, trace, tokens: list[str], layer: int) -> None:
    """weights (1, h, T, T) of the heads shown."""
    st.subheader(f"Every head of layer {layer}")
    caption = ("Each small map is one head's attention weights (rows: query tokens, columns: key tokens), "
               "coloured up to that head's own largest weight. Click a head to open it in the One head view.")
    if len(shown) < trace.num_heads:
        caption += (f" Showing heads {shown.start} to {shown.stop - 1} of {trace.num_heads}; "
                    "move the Head slider to see others.")
    st.caption(caption)
    summary = head_summary(weights, trace["attention_mask"])
    for place, head in enumerate(shown):
        if place % GRID_COLUMNS == 0:
            row = st.columns(GRID_COLUMNS)  # one row at a time, so that the page reads head 0, 1, 2, ...
        chart = _clickable_head(heatmap(weights[0, place], tokens, tokens, title=f"head {head}"), head,
                                summary["entropy"][place], summary["max_weight"][place])
        key = f"grid-head-{head}"
        with row[place % GRID_COLUMNS]:
            st.altair_chart(chart, width="content", key=key, on_select=functools.partial(_open_from_grid, key),
                            selection_mode=GRID_SELECTION)


def _head_window(num_heads: int, current_head: int) -> range:
    """At most MAX_GRID_HEADS consecutive heads, the current one among them."""
    start = min(max(0, current_head - MAX_GRID_HEADS // 2), max(0, num_heads - MAX_GRID_HEADS))
    return range(start, min(num_heads, start + MAX_GRID_HEADS))


def _clickable_head(chart, head: int, entropy: float, max_weight: float) -> alt.LayerChart:
    """The heatmap as a thumbnail under a transparent rectangle that covers it and selects the head on click.

    One target for the whole map works for vector and raster heatmaps alike; its tooltip sums the head up.
    """
    target = alt.Chart(pd.DataFrame({"head": [head], "entropy": [entropy], "max_weight": [max_weight]})).mark_rect(
        opacity=0, cursor="pointer",
    ).encode(
        x=alt.value(0), x2=alt.value({"expr": "width"}), y=alt.value(0), y2=alt.value({"expr": "height"}),
        tooltip=[alt.Tooltip("head:O", title="head (click to open)"),
                 alt.Tooltip("entropy:Q", title="mean entropy (nats)", format=".3f"),
                 alt.Tooltip("max_weight:Q", title="mean largest weight", format=".3f")],
    ).add_params(alt.selection_point(name=GRID_SELECTION, fields=["head"], on="click"))
    heatmap_layer = chart.properties(width=GRID_SIZE, height=GRID_SIZE)  # a copy
    heatmap_layer.autosize = alt.Undefined  # Vega-Lite sizes a layer as a whole: autosize moves up to the layer
    thumbnail = alt.layer(heatmap_layer, target).properties(autosize=chart.autosize)
    # The builder always draws token axes; a thumbnail has no room for them (nor for a legend).
    return thumbnail.configure_legend(disable=True).configure_axis(
        labels=False, ticks=False, domain=False, titleFontSize=0, titlePadding=0)


def _overview(context, num_heads: int) -> None:
    shape = context.shape
    st.subheader("Every layer and head at a glance")
    st.caption("Mean entropy of each head's rows, in nats: low means each query looks at a few tokens, "
               "high means it spreads its attention (a uniform row over T tokens has entropy log T). "
               "Click a cell to open that layer and head.")
    entropy = np.stack([
        head_summary(head_weights(trace), trace["attention_mask"])["entropy"]
        for trace in (context.trace(layer=layer) for layer in range(shape.num_layers))
    ])  # (L, nh)
    chart = heatmap(entropy, [str(layer) for layer in range(shape.num_layers)], [str(h) for h in range(num_heads)],
                    title="mean entropy (nats)", row_title="layer", column_title="head")
    if isinstance(chart, alt.Chart):
        chart = chart.add_params(alt.selection_point(name=OVERVIEW_SELECTION, fields=["row", "column"], on="click"))
        st.altair_chart(chart, width="content", key="overview", on_select=_open_from_overview,
                        selection_mode=OVERVIEW_SELECTION)
    else:
        st.altair_chart(chart, width="content", key="overview")
        st.caption("Too many cells to click one: choose the layer and head with the sliders.")


def _aggregate(context, weights, tokens: list[str]) -> None:
    """weights (1, nh, T, T): every head of the current layer."""
    layer = context.state.layer
    st.subheader("The heads summed up")
    how = controls.bound_widget(st.segmented_control, "aggregate", "Aggregate across heads",
                                options=list(AGGREGATE_LABELS), format_func=AGGREGATE_LABELS.get)
    if how == "rollout":
        # rollout averages each layer's heads first: handing it the means keeps one T×T per layer.
        means = [aggregate_heads(head_weights(context.trace(layer=earlier)), "mean")[:, None]
                 for earlier in range(layer + 1)]  # each (1, 1, T, T)
        matrix, title = rollout(means), f"Attention rollout through layers 0 to {layer}"
        caption = ("Attention rollout (Abnar & Zuidema, 2020): each layer's mean over heads, averaged half and "
                   "half with the identity for the residual connection, multiplied through layers 0 to "
                   f"{layer}. Row i says how much position i's output at layer {layer} draws on each input "
                   "token; every row sums to 1.")
    else:
        matrix = aggregate_heads(weights, how)[0]  # (T, T)
        title = f"{how.capitalize()} over the heads of layer {layer}"
        caption = ("The average of all heads' weights, cell by cell: every row still sums to 1." if how == "mean" else
                   "The largest weight any head gives each (query, key) pair: shows what at least one head "
                   "attends to; rows no longer sum to 1.")
    show(heatmap(matrix, tokens, tokens, title=title), key="chart-aggregate")
    st.caption(caption)


def _open_from_grid(chart_key: str) -> None:
    picked = _picked(chart_key, GRID_SELECTION)
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
