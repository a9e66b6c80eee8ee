"""The neuron view (as bertviz's): how one query token's row of attention is made, number by number.

The sums q · k_j, the scaled scores and the softmax, the element-wise products q ⊙ k_j that sum to them,
the query vector q and every key vector k_j, for the current layer, head, source and scaling. The head and the
query token are picked on the chart itself (components/charts/neuron_chart.py), in the browser; the layer
and the rest rerun. Under grouped-query attention a line under the chart compares the head's keys and query with
those of the heads that share its key/value head: the same keys, number for number, and other queries.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention.stages.kv_heads import SharedHeads
from components.caches import stacks
from components.charts.heatmap import heatmap
from components.charts.neuron_chart import DRAWN_DIMENSIONS, send_plan, windowed
from components.page import controls
from components.page.downloads import chart_downloads
from components.views.parts.scrubbed import scrub_neuron


def render(context) -> None:
    state = context.state
    outline = context.outline()  # the tokens, the heads and the formulas: the numbers come from the chart's stack
    tokens = list(outline.tokens[0])
    query = state.query  # inside the text: the page fitted it (controls.fit_query)
    similarity = "cos(q, k)" if outline.settings.similarity == "cosine" else "q · k"
    scaling = outline.formula("scaled")

    st.caption(f"Query token {query} ({tokens[query]}), layer {state.layer}, head {state.head}. "
               f"Multiply q with each key k_j dimension by dimension (q ⊙ k_j), add the products up "
               f"({similarity}), scale ({scaling}) and take the softmax: the last column is this token's row "
               "of the attention weights. The chart reads from that row down to what it is made of: the "
               f"products, then q and the keys. {similarity} is the raw sum, before scaling: bertviz's neuron view "
               "writes q · k for the scaled score, the column called scaled here.")
    shape = (outline.num_heads, len(tokens))
    heads, queries = send_plan(*shape, outline.head_size, state.head, query)
    stack = stacks.NeuronStack(context.model_name, context.text, context.text_b, context.settings(head=0), heads,
                               queries)
    scrub_neuron(stack, [f"{j}: {token}" for j, token in enumerate(tokens)], outline.head_size,
                 dot_title=similarity, scaled_title="scaled", key="chart-neuron", position=(state.head, query),
                 shape=shape, on_move=_follow_chart, width=context.width, lettering=context.lettering)
    st.caption("Drag the Head and Query token sliders above the chart, or focus one and press the arrow keys: "
               "the numbers of this layer are already in the browser. Point at a number or a cell to read it."
               + (f" The head is {outline.head_size} numbers wide: its products, q and keys are drawn "
                  f"{DRAWN_DIMENSIONS} dimensions at a time, moved with Dimensions from; each row of products sums "
                  f"over all {outline.head_size} to {similarity}."
                  if windowed(outline.head_size) else ""))
    sharing = SharedHeads.of(context.shape, outline.settings)
    if sharing.shared:
        st.caption(_shared_keys_line(context, sharing, query))

    def products_chart():  # for the downloads, built on click only
        view = stacks.neuron_view(context.model_name, context.text, context.text_b, context.settings(), query)
        return heatmap(view.products, [f"{j}: {token}" for j, token in enumerate(tokens)],
                       [str(i) for i in range(outline.head_size)], scheme="redblue", row_title="key token",
                       column_title="dimension of the head",
                       title=f"q ⊙ k_j of query {query} ({tokens[query]}), layer {state.layer}, head {state.head}: "
                             f"each row sums to {similarity}")

    if outline.mask_kind != "none":
        st.caption(f"The mask ({outline.formula('masked')}) hides some keys from the query: they have no numbers "
                   "here and no products, as in bertviz's neuron view of GPT-2, and their weight is 0.")
    chart_downloads(products_chart, "neuron", f"neuron-layer-{state.layer}-head-{state.head}-query-{query}")
    if outline.settings.similarity == "cosine":
        st.caption("Cosine similarity: q and every k_j are scaled to length 1 first, so the products sum to "
                   "the cosine.")


def _shared_keys_line(context, sharing: SharedHeads, query: int) -> str:
    """The chosen head's keys and query against those of the heads that share its key/value head, read off the
    trace: every k_j the same numbers (their largest difference computed, 0), the query token's q not."""
    head = context.state.head
    group = tuple(sharing.sharing(head))
    numbers = stacks.neuron_heads(context.model_name, context.text, context.text_b, context.settings(head=0), group)
    own = group.index(head)
    others = [index for index in range(len(group)) if index != own]
    keys = np.abs(numbers.keys[others] - numbers.keys[own]).max()  # over (g − 1, T, d)
    queries = np.abs(numbers.queries[others, query] - numbers.queries[own, query]).max()  # over (g − 1, d)
    tokens, size = numbers.keys.shape[1:]
    other_heads = (f"head {group[others[0]]}" if len(others) == 1 else
                   f"heads {controls.heads_named([group[index] for index in others])}" if len(others) <= 4 else
                   f"the {len(others)} other heads of the group")
    return (f"Heads {controls.heads_named(group)} share key/value head {sharing.kv_head(head)}: head {head}'s keys "
            f"k_j are those of {other_heads}, number for number (max |difference| = {keys:.3g} over {tokens} keys × "
            f"{size} numbers), while query token {query}'s q differs from head to head (max |difference| "
            f"{queries:.3g}): the heads of a group ask different questions of the same keys.")


def _follow_chart(head: int, query: int) -> None:
    """The reader moved the chart's own head or query token: the rest of the page follows in the rerun."""
    controls.request(head=head, query=query)

