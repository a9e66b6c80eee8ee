"""Two texts side by side: one layer and head for each, and where their attention differs.

The texts run separately (each its own [CLS] … [SEP]), not as a sentence pair. The
difference is taken between the tokens both texts share, aligned in order by the core
(attention/analyses/compare.py): notebook 004's "flies" in "time flies like an arrow" and "fruit
flies like a banana". Both texts and their difference are one chart with one pair of layer
and head inputs, switched in the browser (components/charts/scrub.py); the largest change follows, with each query
token's, between words: [CLS] and [SEP] take up whatever weight a head spends nowhere else, and their changes
outranked the one the pair was written for ("too → [CLS]" over "it" moving from "animal" to "street").
Whole words (words=1) merge each text's words first (attention/text/words.py), then align the words.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from attention.analyses.compare import aligned_positions
from components.caches import chart_memos, experiments, stacks, texts
from components.charts.chart_summaries import describe_changes
from components.charts.draw import draw_spec
from components.charts.heatmap import heatmap
from components.charts.label_room import label_overflow_px, text_px
from components.charts.lettering import READING, Lettering
from components.charts.scrub import send_plan
from components.page import controls
from components.page.downloads import chart_downloads
from components.page.page_state import shorten
from components.views.parts.scrubbed import Panel, said, scrub_panels

FALLBACK_TEXT = "fruit flies like a banana"  # the notebooks' second sentence
DIFFERENCE_SIZE = 260  # px, the difference's plot at most
# px, a text's plot side by side: the smallest, and the largest (panels of 212 px drew a head move slower; in
# presentation mode, legible from the back of a room comes first, and they are as large as the column allows).
# Where the column has no room for two of the smallest (a 1280-px laptop: 166 px each), the texts stand one under
# the other, each STACKED_SIZE px at most: at 150 px side by side, 33 tokens had cells of 4.5 px and no room to
# write half of their labels.
SIDE_BY_SIDE_SIZE = (200, 240)
STACKED_SIZE = 360
PANEL_SPACING = 24  # px between the two texts' panels
BY_QUERY_PX = (120, 320)  # px, the bars of each query token's largest change: at least, at most
TOKEN_COLUMN_PX = 100  # px beside those bars for the query tokens on their left, and for the keys on their right
BAR_PX = 20  # px a query token's bar takes, top to bottom, at least
BY_QUERY_TITLE = "Each query token's largest change"
BY_QUERY_DATA = "by-query"  # its chart's dataset
MORE_IN_A, MORE_IN_B = "#2166ac", "#b2182b"  # blue where text A attends more, red where text B does: the heatmap's


def render(context) -> None:
    state = context.state
    text_a = context.text
    text_b = context.text_b if context.text_b.strip() else FALLBACK_TEXT
    if not context.text_b.strip():
        st.info("No second text in the sidebar, so the text is compared with the notebooks' "
                "“fruit flies like a banana”. Type another under *Second sentence* to compare your own.",
                icon=":material/compare_arrows:")
    st.caption("The two texts run separately here, each on its own, not as a sentence pair; "
               "the source and scaling apply to both, one pair of Layer and Head sliders moves both, and both "
               "heatmaps share one colour scale.")
    # The tokens alone, and the weights from the chart's own numbers: a move builds no trace (the trace
    # of a 472-token text took most of the server's time for a head moved on the chart).
    encoding_b = context.encoding(text=text_b, text_b="")
    if encoding_b.dropped_tokens[0]:
        st.warning(f"Text B is longer than the model reads: its last {encoding_b.dropped_tokens[0]} tokens were "
                   "dropped.", icon=":material/content_cut:")
    whole = controls.words_toggle()
    tokens_a, tokens_b = (texts.text_words(context.model_name, text, "", whole).labels for text in (text_a, text_b))
    # An [UNK] of one text pairs with an [UNK] of the other only where both stand for the same characters.
    positions_a, positions_b = aligned_positions(
        *(experiments.alignment_words(context.model_name, text, whole) for text in (text_a, text_b)))  # (K,) each
    st.caption(f"Text A: {shorten(text_a, 80)} · Text B: {shorten(text_b, 80)}")

    settings = context.settings(layer=0, head=0)
    shape = (context.shape.num_layers, settings.num_heads(context.shape))  # a random source's C // d heads
    longest = max(len(tokens_a), len(tokens_b))
    layers, heads = send_plan(*shape, longest, 2 * longest, state.layer, state.head)  # two texts' worth
    stack_a = stacks.HeadStack(context.model_name, text_a, "", settings, "weights", layers, heads, words=whole)
    stack_b = stacks.HeadStack(context.model_name, text_b, "", settings, "weights", layers, heads, words=whole)
    lettering, unit = context.lettering, "word" if whole else "token"
    titles = dict(row_title=f"query {unit}", column_title=f"key {unit}")
    # Long words' labels take their room off the plots, below MIN_PLOT_PX if need be (at most 44 px): on a phone,
    # a plot of a few words stays on the screen.
    overflow = label_overflow_px([*tokens_a, *tokens_b], lettering)
    beside = (context.width - PANEL_SPACING) // 2 - lettering.label_room_px - overflow  # each text's plot, side by side
    side_by_side = beside >= SIDE_BY_SIDE_SIZE[0]
    largest = context.plot_px() if context.state.present else SIDE_BY_SIDE_SIZE[1]
    size = min(beside, largest) if side_by_side else context.plot_px(cap=None if context.state.present
                                                                       else STACKED_SIZE + overflow) - overflow
    weight_scale = controls.weight_scale_select()
    panels = [Panel(stack_a, tokens_a, tokens_a, "Text A: weights", size=size, weight_scale=weight_scale,
                    lettering=lettering, **titles),
              Panel(stack_b, tokens_b, tokens_b, "Text B: weights", size=size, weight_scale=weight_scale,
                    lettering=lettering, **titles)]
    shared = tuple(tokens_a[i] for i in positions_a)
    if positions_a.size:
        difference = stacks.AlignedDifference(stack_a, stack_b, tuple(positions_a.tolist()),
                                              tuple(positions_b.tolist()))
        panels.append(Panel(difference, shared, shared, "weights A − weights B", scheme="redblue",
                            size=context.plot_px(cap=DIFFERENCE_SIZE) - overflow,
                            weight_scale=weight_scale,
                            lettering=lettering, **titles))
    scrub_panels(panels, key="chart-compare", position=(state.layer, state.head), shape=shape,
                 on_move=_follow_chart, shared_colour=True, side_by_side=side_by_side)

    def shown_charts():  # for the downloads, built on click only: the panels at the page's layer and head
        shown = []
        for panel in panels:
            chart = heatmap(_shown_head(panel.stack, state.layer, state.head), list(panel.row_labels),
                            list(panel.column_labels), title=panel.title, scheme=panel.scheme)
            chart.autosize = alt.Undefined  # a chart inside a concatenation takes the concatenation's
            shown.append(chart)
        return alt.hconcat(*shown).resolve_scale(color="independent")

    chart_downloads(shown_charts, "compare", f"compare-layer-{state.layer}-head-{state.head}",
                    title=f"Layer {state.layer}, head {state.head}")

    st.subheader(f"Where they differ: layer {state.layer}, head {state.head}", anchor=False)
    controls.shared_heads_caption(context.shape, context.settings(), state.head)  # the chart picks the head
    if positions_a.size == 0:
        st.info("The two texts share no token, so there is nothing to subtract.")
        return
    sinks = context.family.sink_words
    count_special = controls.bound_widget(
        st.toggle, "compare_special", "Count the sink tokens",
        help=f"The sinks ({sinks}) take up whatever weight a head spends on no word, so their weights change with "
             "anything; left out, the changes ranked are those between words.")
    found = experiments.head_change(context.model_name, text_a, text_b, context.settings(), count_special, whole)
    if found is None:
        st.info(f"The two texts share no token but the sinks ({sinks}): switch on *Count the sink tokens* to rank "
                "their changes.")
    else:
        _largest_change(found, shared, count_special, sinks, "word positions" if whole else "positions")
        if found.change.difference != 0.0:
            frame = by_query_frame(found, shared)
            draw_spec(*by_query_drawn(frame, context.width, lettering), key="chart-compare-queries",
                      lettering=lettering)
            said([describe_changes(BY_QUERY_TITLE, frame["query"], frame["key"], frame["change"].to_numpy(),
                                   frame["weight in A"].to_numpy(), frame["weight in B"].to_numpy(), unit)])
    st.caption(
        f"{unit.capitalize()}s aligned with difflib.SequenceMatcher over the two {unit} lists: the {len(shared)} "
        f"{unit}s both texts share, matched in order; {unit}s found in only one text have no counterpart and are "
        "left out. Position by position would subtract the weights of different words. Each cell is a weight "
        "from a full row (not renormalised): blue where text A attends more, red where text B does, as deep "
        "for −x as for +x (white is 0)."
        + (" Each text's words are merged before they are aligned: a weight to a word is the sum over its "
           "pieces, a word's row the mean of its pieces' rows." if whole else "")
    )


def by_query_frame(found, shared: tuple[str, ...]) -> pd.DataFrame:
    """Each query token's largest change (found.by_query), a row each in the order of the text: the query and the
    key it changed most for (of the shared tokens), the change and both weights."""
    return pd.DataFrame({
        "order": range(len(found.by_query)),
        "query": [shared[query.change.row] for query in found.by_query],
        "key": [shared[query.change.column] for query in found.by_query],
        "change": [query.change.difference for query in found.by_query],
        "weight in A": [query.weight_a for query in found.by_query],
        "weight in B": [query.weight_b for query in found.by_query],
    })


def by_query_drawn(frame: pd.DataFrame, width: int, lettering: Lettering = READING) -> tuple[dict, dict]:
    """Each query token's largest change (by_query_frame's rows) as a bar chart in a column width px wide: its spec,
    built once for every text of as many rows whose words fit its columns alike, and its one dataset. A new head or
    a new text of as many tokens swaps the rows into the chart drawn, where Altair built it anew for each."""
    frame = frame.assign(**{"to key": "→ " + frame["key"]})
    # long words' text runs past the columns beside the bars (on the left for the queries, right for the keys)
    past = sum(max(0, text_px(frame[column], lettering) - TOKEN_COLUMN_PX) for column in ("query", "to key"))
    plot = min(BY_QUERY_PX[1], max(BY_QUERY_PX[0], width - 2 * TOKEN_COLUMN_PX - int(past)))
    return chart_memos.chart_spec(by_query_spec, plot, len(frame), lettering), {BY_QUERY_DATA: frame}


def by_query_spec(plot: int, rows: int, lettering: Lettering = READING) -> dict:
    """by_query_drawn's chart of `rows` bars plot px wide, the query on the left, the key it changed most for on the
    right, both weights on hover, read from the dataset BY_QUERY_DATA. Tokens are data, never expressions."""
    height = round(max(BAR_PX, 1.6 * lettering.font_px) * rows)
    base = alt.Chart().encode(y=alt.Y("order:O", axis=None)).properties(height=height)
    tooltip = [alt.Tooltip("query:N", title="query token"), alt.Tooltip("key:N", title="its largest change at"),
               alt.Tooltip("change:Q", title="A − B", format="+.3f"),
               alt.Tooltip("weight in A:Q", format=".3f"), alt.Tooltip("weight in B:Q", format=".3f")]
    bars = base.mark_bar().encode(
        x=alt.X("change:Q", title="A − B"),
        color=alt.condition("datum.change > 0", alt.value(MORE_IN_A), alt.value(MORE_IN_B)),
        tooltip=tooltip,
    )
    # Symmetric, as long a bar for −x as for +x: an unseen mark at each bar's mirror widens the scale to ±the longest.
    # Its ends found in the data, not written into the spec: a new head swaps the rows into the chart drawn.
    mirrors = base.mark_tick(opacity=0).transform_calculate(mirror="-datum.change").encode(
        x=alt.X("mirror:Q"), tooltip=alt.value(None))
    bars = alt.layer(bars, mirrors).properties(width=plot)
    queries = base.mark_text(align="right", fontSize=lettering.font_px).encode(
        x=alt.value(TOKEN_COLUMN_PX), text="query:N", tooltip=tooltip).properties(width=TOKEN_COLUMN_PX)
    keys = base.mark_text(align="left", fontSize=lettering.font_px, color="#555").encode(
        x=alt.value(0), text="to key:N", tooltip=tooltip).properties(width=TOKEN_COLUMN_PX)
    return alt.hconcat(queries, bars, keys, data=alt.NamedData(name=BY_QUERY_DATA), spacing=8).properties(
        title=BY_QUERY_TITLE).configure_view(stroke=None).to_dict(validate=False)


def _shown_head(stack: stacks.HeadStack | stacks.AlignedDifference, layer: int, head: int) -> np.ndarray:
    """(T, T): one head of the stack (its weights, or the difference of two texts'), which holds it."""
    return stack.values()[stack.layers.index(layer), stack.heads.index(head)]


def _follow_chart(layer: int, head: int) -> None:
    """The reader moved the chart's layer or head: the largest change and the link follow in the rerun."""
    controls.request(layer=layer, head=head)


def _largest_change(found, shared, count_special: bool, sinks: str, positions: str = "positions") -> None:
    change = found.change
    among = "the shared tokens" if count_special else f"the shared words, the sinks ({sinks}) left out"
    st.metric("Largest change, A − B", f"{change.difference:+.3f}",
              help=f"The aligned (query, key) pair whose weight differs most between the two texts, among {among}.")
    if change.difference == 0.0:
        st.caption("The two texts give the shared tokens exactly the same weights.")
        return
    (a_row, a_column), (b_row, b_column) = change.position_a, change.position_b
    st.text(f"query {shared[change.row]} → key {shared[change.column]}\n"
            f"A: {found.weight_a:.3f} ({positions} {a_row} → {a_column})\n"
            f"B: {found.weight_b:.3f} ({positions} {b_row} → {b_column})")
    if not count_special:
        st.caption(f"The sinks ({sinks}) are left out, as queries and as keys: they take up whatever weight a head "
                   "spends on no word. The bars below give each query token's own largest change; point at one "
                   "for both weights.")
