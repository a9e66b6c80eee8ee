"""All heads of a layer: a grid of small heatmaps, a layer × head overview, and the heads summed up.

Clicking a head in the grid, or a cell of the overview, opens that head in the "One head"
view: each chart carries an Altair point selection, and its on_select callback asks the
controls for the new view, layer and head before the page reruns.

Moving the layer slider redraws twelve thumbnails. Their specs depend on the text and the head,
not on the weights, so each is built once (Altair's chart building and schema validation cost
more than everything else here) and every rerun hands over only the data: the browser then swaps
the numbers into the views it drew instead of building them anew.
"""

from __future__ import annotations

import dataclasses
import functools

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from attention.heads import aggregate_heads, head_summary, head_weights, rollout
from components import compute, controls
from components.charts import named_data
from components.heatmap import MAX_VECTOR_CELLS, heatmap

GRID_COLUMNS = 4
GRID_SIZE = 170  # px, the side of one small heatmap
# bert-large has 16 heads; a random source with a tiny head_dim has hundreds, shown 16 at a time.
MAX_GRID_HEADS = 16
# Above this many weights (nh·T² per layer) the overview and the summaries are not computed: ~128 MB.
MAX_LAYER_WEIGHTS = 2**25
GRID_SELECTION = "open_head"
SUMMARY_DATA = "head-summary"  # the dataset behind a thumbnail's click target: its head, entropy, largest weight
OVERVIEW_SELECTION = "open_cell"
# Thumbnails are painted on a canvas: a move of the layer slider repaints all of them, which as SVG
# meant removing and creating an element for each of up to 16 × 64² cells. The overview, which no
# layer move changes, stays SVG: its cells are elements a screen reader (and a browser test) can find.
CANVAS = {"embedOptions": {"renderer": "canvas"}}
SVG = {"embedOptions": {"renderer": "svg"}}
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
    specs = _thumbnail_specs(tuple(tokens), tuple(shown))
    for place, head in enumerate(shown):
        if place % GRID_COLUMNS == 0:
            row = st.columns(GRID_COLUMNS)  # one row at a time, so that the page reads head 0, 1, 2, ...
        frames = _thumbnail_frames(weights[0, place], tokens, head)
        frames[SUMMARY_DATA] = pd.DataFrame({"head": [head], "entropy": [summary["entropy"][place]],
                                             "max_weight": [summary["max_weight"][place]]})
        key = f"grid-head-{head}"
        with row[place % GRID_COLUMNS]:
            _draw(specs[place], frames, key,
                  on_select=functools.partial(_open_from_grid, key), selection_mode=GRID_SELECTION)


@st.cache_data(show_spinner=False, max_entries=16)
def _thumbnail_specs(tokens: tuple[str, ...], heads: tuple[int, ...]) -> list[dict]:
    """The Vega-Lite spec of each head's thumbnail, its data left out (named_data's names, and SUMMARY_DATA).

    A heatmap's spec depends on its labels, title and size, never on its numbers (its colour scale
    is computed in the browser), so a placeholder matrix builds the same spec as the weights would.
    """
    placeholder = np.zeros((len(tokens), len(tokens)), dtype=np.float32)  # (T, T)
    return [_clickable_head(named_data(heatmap(placeholder, list(tokens), list(tokens), title=f"head {head}"))[0])
            .to_dict(validate=False) for head in heads]


def _thumbnail_frames(weights: np.ndarray, tokens: list[str], head: int) -> dict[str, pd.DataFrame]:
    """weights (T, T) -> the rows of a thumbnail, under the names its spec gives them.

    A picture (above MAX_VECTOR_CELLS) takes heatmap()'s own rows. Cells take only (row, column, value):
    building a whole heatmap to read its rows cost more than the rest of a move, and a thumbnail shows
    no tooltip per cell, so the token labels need not travel.
    """
    if weights.size > MAX_VECTOR_CELLS:
        return named_data(heatmap(weights, tokens, tokens, title=f"head {head}"))[1]
    row, column = np.indices(weights.shape)  # (T, T) each
    return {"data-0": pd.DataFrame({"row": row.ravel(), "column": column.ravel(), "value": weights.ravel()})}


def _head_window(num_heads: int, current_head: int) -> range:
    """At most MAX_GRID_HEADS consecutive heads, the current one among them."""
    start = min(max(0, current_head - MAX_GRID_HEADS // 2), max(0, num_heads - MAX_GRID_HEADS))
    return range(start, min(num_heads, start + MAX_GRID_HEADS))


def _clickable_head(chart) -> alt.LayerChart:
    """The heatmap as a thumbnail under a transparent rectangle that covers it and selects the head on click.

    One target for the whole map works for vector and raster heatmaps alike; its tooltip sums the head
    up from the dataset SUMMARY_DATA (one row: head, entropy, max_weight).
    """
    target = alt.Chart(alt.NamedData(name=SUMMARY_DATA)).mark_rect(
        opacity=0, cursor="pointer",
    ).encode(
        x=alt.value(0), x2=alt.value({"expr": "width"}), y=alt.value(0), y2=alt.value({"expr": "height"}),
        tooltip=[alt.Tooltip("head:O", title="head (click to open)"),
                 alt.Tooltip("entropy:Q", title="mean entropy (nats)", format=".3f"),
                 alt.Tooltip("max_weight:Q", title="mean largest weight", format=".3f")],
    ).add_params(alt.selection_point(name=GRID_SELECTION, fields=["head"], on="click"))
    heatmap_layer = chart.properties(width=GRID_SIZE, height=GRID_SIZE)  # a copy
    if isinstance(heatmap_layer, alt.Chart):  # the cells' tooltips lie under the target: never shown, still computed
        heatmap_layer.encoding = heatmap_layer.encoding.copy(deep=False)
        heatmap_layer.encoding.tooltip = alt.Undefined
    # Vega-Lite takes the sizing and the embed options of a layer as a whole: they move up to the layer.
    heatmap_layer.autosize = heatmap_layer.usermeta = alt.Undefined
    thumbnail = alt.layer(heatmap_layer, target).properties(autosize=chart.autosize, usermeta=CANVAS)
    # The builder always draws token axes; a thumbnail has no room for them (nor for a legend). Vega would
    # compute an ARIA description for every cell, which a canvas never shows, and filter the cells for
    # missing values, which weights never have.
    return thumbnail.configure_mark(aria=False, invalid="show").configure_legend(disable=True).configure_axis(
        labels=False, ticks=False, domain=False, titleFontSize=0, titlePadding=0)


def _overview(context, num_heads: int) -> None:
    shape = context.shape
    st.subheader("Every layer and head at a glance")
    st.caption("Mean entropy of each head's rows, in nats: low means each query looks at a few tokens, "
               "high means it spreads its attention (a uniform row over T tokens has entropy log T). "
               "Click a cell to open that layer and head.")
    # The same for every layer: moving the layer slider reads it from the cache.
    entropy = _entropy_by_layer(context.model_name, context.text, context.text_b, context.settings(layer=0),
                                shape.num_layers)  # (L, nh)
    chart = heatmap(entropy, [str(layer) for layer in range(shape.num_layers)], [str(h) for h in range(num_heads)],
                    title="mean entropy (nats)", row_title="layer", column_title="head")
    clickable = isinstance(chart, alt.Chart)
    if clickable:
        chart = chart.add_params(alt.selection_point(name=OVERVIEW_SELECTION, fields=["row", "column"], on="click"))
    chart = chart.properties(usermeta=SVG)
    bare, frames = named_data(chart)
    if clickable:
        _draw(bare.to_dict(validate=False), frames, "overview", on_select=_open_from_overview,
              selection_mode=OVERVIEW_SELECTION)
    else:
        _draw(bare.to_dict(validate=False), frames, "overview")
        st.caption("Too many cells to click one: choose the layer and head with the sliders.")


@st.cache_data(show_spinner=False, max_entries=16)
def _entropy_by_layer(model_name: str, text: str, text_b: str, settings, num_layers: int) -> np.ndarray:
    """(L, nh): the mean entropy of every head of every layer, for settings at each layer in turn."""
    return np.stack([
        head_summary(head_weights(trace), trace["attention_mask"])["entropy"]
        for trace in (compute.trace(model_name, text, text_b, dataclasses.replace(settings, layer=layer))
                      for layer in range(num_layers))
    ])  # (L, nh)


def _aggregate(context, weights, tokens: list[str]) -> None:
    """weights (1, nh, T, T): every head of the current layer."""
    layer = context.state.layer
    st.subheader(f"The heads of layer {layer} summed up")
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
        # The layer is in the subheader, not the title: the spec stays the same from layer to layer,
        # so the browser swaps the numbers in instead of building the chart again.
        title = f"{how.capitalize()} over the heads"
        caption = ("The average of all heads' weights, cell by cell: every row still sums to 1." if how == "mean" else
                   "The largest weight any head gives each (query, key) pair: shows what at least one head "
                   "attends to; rows no longer sum to 1.")
    # On a canvas, like the thumbnails: every layer move swaps its numbers. Above 64 tokens it is a layered picture.
    bare, frames = named_data(heatmap(matrix, tokens, tokens, title=title, canvas=True))
    _draw(bare.to_dict(validate=False), frames, "chart-aggregate")
    st.caption(caption)


def _draw(spec: dict, frames: dict[str, pd.DataFrame], key: str, **selection) -> None:
    """Draw a spec whose datasets are named by named_data, so that the next rerun only swaps their rows.

    The spec is not validated here (Altair's validation cost more than the drawing): tests/test_view_heads.py
    checks every spec this view draws against the schema once.
    """
    st.vega_lite_chart(None, {**spec, "datasets": frames}, width="content", key=key, **selection)


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
