"""All heads of a layer: a grid of small heatmaps and the heads summed up, with a layer × head overview.

The grid and the summary are one chart, and its layer is picked on the chart itself: its dataset
holds every head of every layer (when they fit ALL_LAYERS_WEIGHTS), a point selection bound to a
range input above the grid picks one layer, and the grid and the summary switch at once in the
browser. Streamlit then reports the selection, and a rerun of the heading and the grid (a fragment of
theirs, with the grid's own controls) brings the heading and the URL up to it; the chart arrives again unchanged
(components/charts/scrub.py does the same for one head). The overview and the parks under it are not run again.
A text too long for the budget sends only the current layer: the input then asks for a rerun.

Clicking a head in the grid, or a cell of the overview, opens that head in the "One head" view:
each chart carries an Altair point selection, and its on_select callback asks the controls for the
new view, layer and head before the page reruns.

The weights can be weighted by value norm (α·‖f(x)‖, rows renormalised, as AttentionViz does), and under the
overview a small chart says where each layer's attention parks (the sink tokens, punctuation), by weight and by
what moves (Clark et al. 2019, Kobayashi et al. 2020). Whole words (words=1) merge each word's pieces in the grid
and the summaries (attention/text/words.py: to a word summed, from it averaged); the rollout is computed between
tokens, as the model mixes them, and merged after.

The grid is one view of a dozen pictures, placed by their data, not a facet per head: a chart per head
(12 views of 1,024 cells each) cost the browser 20-25 ms a head. Every layer's pictures stay in it and a
move only widens the picked layer's (the others are 0 px wide), and the summary's cells stay and take the
picked layer's values (components/charts/scrub.py): nothing is loaded or made anew.
"""

from __future__ import annotations

import dataclasses

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from attention.dissect.heads import aggregate_heads, head_summary
from attention.stages.kv_heads import SharedHeads
from attention.stages.settings import SOURCE_LABELS
from components.caches import chart_memos, layers, moves, stacks, texts
from components.charts import grid
from components.charts.aggregates import AGGREGATES
from components.charts.chart_text import describe_layer
from components.charts.draw import data_value, draw_spec, one_row, spec_and_frames, with_named_data
from components.charts.grid import (
    FOCUS_COLOUR,
    GRID_SELECTION,
    SVG,
    GridLayout,
    grid_layout,
)
from components.charts.heads_text import describe_overview, describe_parks
from components.charts.heatmap import LAYER, MAX_VECTOR_CELLS, heatmap, heatmap_frames
from components.charts.label_room import fitted_size, label_overflow_px
from components.charts.label_stand_ins import stand_ins, with_labels
from components.charts.lettering import Lettering
from components.charts.moves import park_frame, park_spec
from components.charts.scrub import INPUT_STYLE, placed
from components.charts.token_axes import second_sentence_from
from components.classroom import classroom, questions
from components.page import controls
from components.page.downloads import chart_downloads
from components.page.page_state import WEIGHT_SCALES
from components.views.parts.number_table import number_table, tables_on_request
from components.views.parts.own_fragment import own_fragment
from components.views.parts.scrubbed import anchor_for, report_move, said

# bert-large has 16 heads; a random source with a tiny head_dim has hundreds, shown 16 at a time.
MAX_GRID_HEADS = 16
# Above this many weights (nh·T² per layer) the overview and the summaries are not computed: ~128 MB.
MAX_LAYER_WEIGHTS = 2**25
# Every layer is sent when all its heads fit (nl·nh·T² weights): 2**21 is a 170-token text on the bundled
# model (72 pictures, ~1.1 MB, and the summaries ~0.3 MB: ~1.5 MB at most; 0.3 MB at 32 tokens), 120
# tokens on bert-base. Above it only the current layer is sent, and a move of the input reruns the page.
ALL_LAYERS_WEIGHTS = 2**21
CHART_KEY = "grid"
OVERVIEW_SELECTION = "open_cell"
OVERVIEW_HEAD, OVERVIEW_HEAD_DATA = "marked_head", "overview-head"  # the head marked on its axis, and its dataset
# Low entropy is a focused head: drawn darkest, as the eye reads "more" (a reversed scale; the numbers stay entropy).
OVERVIEW_TITLE = "Mean entropy (nats): darker = more focused, lighter = more spread out"
OVERVIEW_SCHEME = "tinted blues"  # reversed: the darker a cell, the lower its entropy


def render(context) -> None:
    """The grid and its summary (a fragment of their own: their controls rerun them alone), then the overview and
    where attention parks, which none of those controls change."""
    outline = context.outline()  # the tokens and the heads: the weights come from the chart's stack
    num_heads, token_count = outline.num_heads, len(outline.tokens[0])  # the weights are between tokens, merged or not
    summed = num_heads * token_count ** 2 <= MAX_LAYER_WEIGHTS
    _layer_of_heads(context, num_heads, token_count, summed)
    if summed:
        _overview(context, num_heads)
        _parks(context)


@own_fragment(linked=True)
def _layer_of_heads(context, num_heads: int, token_count: int, summed: bool) -> None:
    """The heading, the grid of every head of the layer and their summary, with the controls that change only
    them: the layer picked on the chart, the weights' colours, whole words, value norm, the tokens beside the
    maps and how the heads are summed up. A press of one reruns this alone, not the side column, the overview and
    the parks (a third of the view's elements, which React renders again at every run)."""
    state = controls.pending_state()  # a run of this alone is called with the arguments of the view's last run
    context = dataclasses.replace(context, state=state)
    st.subheader(f"Every head of layer {state.layer}" + (", weighted by value norm" if state.value_norm else ""),
                 anchor=False)
    weight_scale = controls.weight_scale_select()
    words = texts.text_words(context.model_name, context.text, context.text_b, controls.words_toggle())
    tokens = list(words.labels)  # each word (or token) as it reads
    # (1, W): whether each word is text, not padding (a word's tokens are all text or all padding)
    attention_mask = context.encoding().attention_mask[:, [start for start, _ in words.spans]]
    second = second_sentence_from(list(words.token_type_ids))  # sentence B's first word, if a pair
    num_layers = context.shape.num_layers
    shown = _head_window(num_heads, state.head)
    group = SharedHeads.of(context.shape, context.settings()).group_size  # query heads to a key/value head
    layers = (tuple(range(num_layers)) if num_layers * num_heads * token_count ** 2 <= ALL_LAYERS_WEIGHTS
              else (state.layer,))
    merged = len(words) < token_count
    by_value = state.value_norm  # the toggle stands under the caption; the state holds its value already
    unit = "word" if merged else "token"
    caption = (f"Each small map is one head's attention weights (rows: query {unit}s, columns: key {unit}s, "
               f"in the order of the tokens above), coloured from 0 (white) to {WEIGHT_SCALES[weight_scale][1]} "
               "(darkest blue). Click a head to open it in the One head view; the Head slider beside the view "
               "rings its head in red, and marks it in red on the overview's head axis below. ")
    if group > 1:
        caption += (f"Each key/value head is read by {group} query heads: their titles name it (head {group} · kv 1), "
                    "and they stand together on one shaded band. They score the same keys and mix the same values, "
                    "and differ in their queries alone. ")
    if merged:
        caption += ("A word the tokenizer split is one row and one column: its weight as a key is the sum over its "
                    "pieces, its row the mean of its pieces' rows. ")
    width = context.width - label_overflow_px(tokens, context.lettering)  # the summary's long words take room
    if len(tokens) > grid_layout(width, len(tokens), False, context.lettering).side:
        caption += "The text has more tokens than a small map has pixels: each pixel is the largest weight of a few. "
    if len(shown) < num_heads:
        caption += (f"Showing heads {shown.start} to {shown.stop - 1} of {num_heads}; "
                    "move the Head slider to see others. ")
    caption += ("Drag the Layer slider above the grid, or focus it and press the arrow keys: "
                + ("every layer is already in the browser." if len(layers) > 1 else
                   "this text is too long to send every layer at once, so each move fetches its layer."))
    if by_value:
        caption += (" Weighted by value norm: each weight times ‖f(x_j)‖, the length of what its key hands on, "
                    "each row rescaled to sum to 1; the rollout and the overview read the weights themselves.")
    # On a projector the maps come first, on the first screen, and the words about them and their toggles under
    # them: under four lines of caption and two toggles, a 1280x720 projector showed their first 70 px.
    chart = st.container() if state.present else None  # drawn once the aggregate below it is chosen
    st.caption(caption)
    labelled = controls.bound_widget(st.toggle, "grid_tokens", "Tokens beside the small maps",
                                     help="Each small map grows to write its query tokens on the left and its key "
                                          "tokens under it (every other one, or fewer, on a long text).")
    by_value = controls.value_norm_toggle()
    stack = stacks.HeadStack(context.model_name, context.text, context.text_b, context.settings(layer=0, head=0),
                             "weights", layers, tuple(range(num_heads)) if summed else tuple(shown),
                             value_norm=by_value, words=merged)
    if chart is None:
        chart = st.container()
    if not summed:
        with chart:
            _grid_and_summary(stack, shown, None, tokens, num_layers, state.layer, attention_mask,
                              width, weight_scale, num_heads, second, context.lettering, labelled, state.head, group)
        st.info(f"{num_heads} heads × {len(tokens)}² token pairs are too many weights to sum up here: "
                "choose a larger head_dim or a shorter text for the overview and the aggregate.")
        return
    # Under the chart, next to the summary it changes: the grid stays as high up the page as it can.
    how = controls.bound_widget(st.segmented_control, "aggregate", "Heads summed up by",
                                options=list(AGGREGATES), format_func=AGGREGATES.get,
                                wrap=True)
    st.caption(_aggregate_caption(how, state.layer, context.settings()))
    with chart:
        _grid_and_summary(stack, shown, how, tokens, num_layers, state.layer, attention_mask,
                          width, weight_scale, num_heads, second, context.lettering, labelled, state.head, group)

    def summary_chart():  # for the downloads, built on click only
        summed = _summed(stack, how)[stack.layers.index(state.layer)]  # (T, T)
        return heatmap(summed, tokens, tokens, title=f"{AGGREGATES[how].capitalize()}, layer {state.layer}",
                       second_sentence=(second, second), row_title=f"query {unit}", column_title=f"key {unit}")

    chart_downloads(summary_chart, "heads-summary", f"{how}-of-heads-layer-{state.layer}")


def _grid_and_summary(stack: stacks.HeadStack, shown: range, how: str | None, tokens: list[str], num_layers: int,
                      layer: int, attention_mask: np.ndarray, width: int, weight_scale: str, num_heads: int,
                      second: int | None, lettering: Lettering, labelled: bool = False, focus: int = 0,
                      group: int = 1) -> None:
    """The grid of the heads shown (coloured by weight_scale, over the layer's num_heads; the tokens beside each,
    when labelled; head `focus` ringed; under grouped-query attention the `group` heads sharing a key/value head
    together) and, with how, their summary under it (sentence B marked from token `second` on): one chart, one
    layer input, in a column width px wide, its text as large as lettering says."""
    # What the chart shows, but not the layer, which moves without a new spec (one layer sent: its data swapped).
    raster = how is not None and len(tokens) ** 2 > MAX_VECTOR_CELLS
    layout = grid_layout(width, len(tokens), labelled, lettering, group, shown.start)
    # Built once for every text of this length: the summary's labels are data (label_stand_ins), where Altair built the
    # chart anew for each new text (200 ms). Tokens written beside the grid's pictures are in the spec itself.
    standing = {} if layout.band else stand_ins(tokens)
    # How the heads are summed up is data too (grid.aggregate_frames): a new way keeps the chart, and its inputs
    # where the reader left them, as a new layer of numbers does.
    drawing = (num_layers, len(shown), len(stack.layers) > 1, how is not None,
               standing.get(tuple(tokens), tuple(tokens)), raster, layout, fitted_size(width, lettering=lettering),
               second, lettering, "word" if stack.words else "token")
    identity = (dataclasses.replace(stack, layers=stack.layers if len(stack.layers) > 1 else ()), tuple(shown),
                tuple(tokens), drawing)
    anchor = anchor_for(CHART_KEY, identity, (layer, 0))[0]
    spec, label_frames = with_labels(chart_memos.chart_spec(grid.spec, *drawing), standing)
    spec = placed(spec, {LAYER: anchor})
    frames = chart_memos.chart_data(_grid_frames, stack, tuple(shown), tuple(attention_mask[0].tolist()), layout,
                                    weight_scale, num_heads) | grid.focus_frames(focus) | label_frames
    if how is not None:
        frames = {**frames, **chart_memos.chart_data(_summary_frames, stack, how, raster), **grid.aggregate_frames(how)}
    st.html(INPUT_STYLE)
    draw_spec(spec, frames, key=CHART_KEY, lettering=lettering, on_select=_on_grid,
              selection_mode=[GRID_SELECTION, LAYER])
    if layer in stack.layers:
        said([describe_layer(layer, list(stack.heads), stack.values()[stack.layers.index(layer)], tokens)])
        _grid_tables(stack, how, tokens, layer, focus)


def _grid_tables(stack: stacks.HeadStack, how: str | None, tokens: list[str], layer: int, head: int) -> None:
    """When asked (number_table's toggle), the numbers of the head the side Head slider rings, at the layer the
    grid stands at, and of the heads summed up by how: two tables, not the layer's every head (a dozen tables
    would bury the rest of the page under them)."""
    unit = "word" if stack.words else "token"
    titles = dict(row_title=f"query {unit}", column_title=f"key {unit}")
    at = stack.layers.index(layer)

    def tables() -> None:
        number_table(stack.values()[at, stack.heads.index(head)], tokens, tokens, **titles,
                     caption=f"Attention weights{', weighted by value norm' if stack.value_norm else ''}, layer "
                             f"{layer}, head {head} (ringed in the grid)")
        if how is not None:
            number_table(_summed(stack, how)[at], tokens, tokens, **titles,
                         caption=f"{AGGREGATES[how].capitalize()}, layer {layer}")

    tables_on_request(CHART_KEY, tables)


def _grid_frames(stack: stacks.HeadStack, shown: tuple[int, ...], attention_mask: tuple[int, ...], layout: GridLayout,
                 weight_scale: str = "head", num_heads: int = 0) -> dict[str, pd.DataFrame]:
    """The grid's dataset (grid.grid_frames) from the stack's weights, computed only when no kept dataset answers:
    the heads shown, their summaries, and the layer's every head where the colours reach across the layer."""
    every_head = stack.values()  # (nl, heads of the stack, T, T)
    picked = [stack.heads.index(head) for head in shown]
    weights = every_head if picked == list(range(len(stack.heads))) else every_head[:, picked]  # (nl, h, T, T)
    if weight_scale == "layer" and len(stack.heads) < num_heads:
        every_head = stack.with_heads(tuple(range(num_heads))).values()
    mask = np.asarray([attention_mask])  # (1, T)
    summaries = [head_summary(heads[None], mask) for heads in weights]
    return grid.grid_frames(weights, stack.layers, shown, summaries, layout, weight_scale, every_head)


def _summary_frames(stack: stacks.HeadStack, how: str, raster: bool) -> dict[str, pd.DataFrame]:
    return grid.summary_frames(_summed(stack, how), stack.layers, raster)


def _summed(stack: stacks.HeadStack, how: str) -> np.ndarray:
    """(nl, T, T): every layer of the stack, its heads summed up by how."""
    if how == "rollout":
        rollout = layers.rollout_by_layer(stack.model, stack.text, stack.text_b, stack.settings, stack.layers)
        return texts.merged_words(rollout, stack.model, stack.text, stack.text_b) if stack.words else rollout
    return aggregate_heads(stack.values(), how)


def _aggregate_caption(how: str, layer: int, settings) -> str:
    if how == "rollout":
        model_own = settings.source == "bert" and settings.scaling == "sqrt"
        return ("Attention rollout (Abnar & Zuidema, 2020): each layer's mean over heads, averaged half and half "
                "with the identity for the residual connection, multiplied through layers 0 to "
                f"{layer}. Row i says how much position i's output at layer {layer} draws on each input "
                "token; every row sums to 1. "
                + ("It uses the model's own weights (source trained, scaling √d_k), as the paper does."
                   if model_own else
                   f"It follows the source ({SOURCE_LABELS[settings.source]}) and the scaling "
                   f"({controls.SCALING_LABELS[settings.scaling]}) chosen beside this view, in every layer, so it "
                   "differs from the model's own rollout (source trained, √d_k)."))
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
               "The darker a cell, the more focused its head: entropy 0 is the darkest blue, and the most "
               "spread-out head is the palest blue, never white (white would read as nothing there). "
               "Click a cell to open that layer and head.")
    # The same for every layer and head: moving either slider reads it from the cache.
    entropy = layers.entropy_by_layer(context.model_name, context.text, context.text_b, context.settings(),
                                       shape.num_layers)  # (L, nh)
    spec, frames = overview_drawn(entropy[:, :num_heads], context.plot_px(), context.lettering)
    frames = {**frames, **one_row(OVERVIEW_HEAD_DATA, head=int(context.state.head))}
    if any(param.get("name") == OVERVIEW_SELECTION for param in spec.get("params", [])):  # cells, one to click
        draw_spec(spec, frames, key="overview", lettering=context.lettering, on_select=_open_from_overview,
                  selection_mode=OVERVIEW_SELECTION)
    else:
        draw_spec(spec, frames, key="overview", lettering=context.lettering)
        st.caption("Too many cells to click one: choose the layer and head with the sliders.")
    said([describe_overview(entropy)])
    tables_on_request("overview", lambda: number_table(
        entropy, [f"layer {layer}" for layer in range(shape.num_layers)], [f"head {head}" for head in range(num_heads)],
        caption="Mean entropy of each head's rows, in nats", row_title="layer", column_title="head", no_number="none"))


def overview_drawn(entropy: np.ndarray, size: int, lettering: Lettering) -> tuple[dict, dict]:
    """The overview's spec and datasets. Drawn as cells, its spec is built once for every entropy of its shape, and
    the numbers are its datasets alone (as chart_memos.kept_heatmap's): built anew for each new text, it was a fifth of
    the view's answer to one. A picture, drawn from the numbers, is kept whole."""
    if entropy.size > MAX_VECTOR_CELLS:
        return chart_memos.drawn_chart(_overview_chart, entropy, size, lettering)
    spec = chart_memos.chart_spec(_overview_spec, entropy.shape, size, lettering)
    return spec, heatmap_frames(entropy, OVERVIEW_SCHEME)


def _overview_spec(shape: tuple[int, int], size: int, lettering: Lettering) -> dict:
    return spec_and_frames(_overview_chart(np.zeros(shape, dtype=np.float32), size, lettering))[0]


def _overview_chart(entropy: np.ndarray, size: int, lettering: Lettering) -> alt.TopLevelMixin:
    """entropy (L, nh) as the overview's heatmap; drawn as cells, with the side column's head (OVERVIEW_HEAD_DATA)
    marked on the head axis in the grid's ring's red, and a click on a cell as its selection."""
    layers, heads = entropy.shape
    chart = heatmap(entropy, [str(layer) for layer in range(layers)], [str(h) for h in range(heads)],
                    title=OVERVIEW_TITLE, row_title="layer", column_title="head", size=size, scheme=OVERVIEW_SCHEME,
                    reverse=True, lettering=lettering)
    if isinstance(chart, alt.Chart):
        chart = _head_marked(chart, lettering.label_colour)
        chart = chart.add_params(alt.selection_point(name=OVERVIEW_SELECTION, fields=["row", "column"], on="click"))
        # Named: Altair names a layer's view by a count of the charts it built, which a new text would change
        chart = with_named_data(chart.properties(name="overview_cells"), OVERVIEW_HEAD_DATA)
    return chart.properties(usermeta=SVG)


def _head_marked(chart: alt.Chart, ink: str) -> alt.Chart:
    """The overview with the side column's head's label on its head axis in FOCUS_COLOUR and bold (the others in
    ink), the head read from OVERVIEW_HEAD_DATA: written into the spec, each head was a chart the browser built anew.
    Not its cell: the layer moves on the grid's own input, which leaves every chart as it is."""
    marked = f"datum.value == {OVERVIEW_HEAD}"
    x = chart.encoding["x"]
    axis = {**x["axis"].to_dict(), "labelColor": alt.ExprRef(f"{marked} ? '{FOCUS_COLOUR}' : '{ink}'"),
            "labelFontWeight": alt.ExprRef(f"{marked} ? 'bold' : 'normal'")}
    chart = chart.encode(x=alt.X("column:O", axis=alt.Axis(**axis), scale=x["scale"]))
    return chart.add_params(alt.param(name=OVERVIEW_HEAD, expr=data_value(OVERVIEW_HEAD_DATA, 0, "head", -1)))


def _parks(context) -> None:
    """Every layer's share of its heads' attention on the sink tokens and on punctuation, by weight and by what
    moves, and what that says of this model and text."""
    shares = moves.park_shares(context.model_name, context.text, context.text_b, context.settings(),
                                context.shape.num_layers)
    st.subheader("Where attention parks", anchor=False)
    # One spec for every text and setting: their shares are the bars' data (a new text built it with Altair)
    spec = chart_memos.chart_spec(park_spec, shares.places, context.width, context.lettering)
    draw_spec(spec, {"data-0": park_frame(shares.places, shares.weight, shares.moved)}, key="parks",
              lettering=context.lettering)
    said([describe_parks(shares.places, shares.weight, shares.moved)])
    layer, place = shares.busiest()
    st.caption(f"A sink is a token where heads park the attention they have no use for elsewhere: this model's are "
               f"{context.family.sink_words}. Clark et al. (2019) found that bert-base's middle layers put over half "
               "of their attention on [SEP] and read it as a no-op; Kobayashi et al. (2020) weighted each weight by "
               "‖f(x)‖, the length of what its key hands on, and found that the sinks move little. Here, for this "
               f"text, layer {layer} puts {shares.weight[layer, place]:.0%} of its weight on {shares.places[place]} "
               f"but {shares.moved[layer, place]:.0%} of what moves. Each bar is a share of all the layer's heads' "
               "attention, summed over every query.")


def _on_grid() -> None:
    """The grid's layer input moved (the rest of the page follows), or a head was clicked (it opens, at the
    layer the chart shows)."""
    opened = _picked(CHART_KEY, GRID_SELECTION)
    report_move(CHART_KEY, lambda layer, _head: controls.request(layer=layer))
    if not opened:
        return
    head, layer = int(opened["head"]), controls.current_state().layer  # the layer the chart has just reported
    if questions.answer_on_chart(classroom.class_seat(), "previous", layer, head):  # an answer opens nothing
        controls.rerun_whole_page()  # the question's card, above the view, shows the answer
    else:
        controls.request(view="head", head=head)


def _open_from_overview() -> None:
    picked = _picked("overview", OVERVIEW_SELECTION)
    if picked:
        controls.request(view="head", layer=int(picked["row"]), head=int(picked["column"]))


def _picked(chart_key: str, selection: str) -> dict | None:
    """The point a click selected on a chart, or None when the click cleared the selection."""
    points = st.session_state[chart_key]["selection"].get(selection) or []
    return points[0] if points else None
