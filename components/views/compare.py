"""Two texts side by side: one layer and head for each, and where their attention differs.

The texts run separately (each its own [CLS] … [SEP]), not as a sentence pair. The
difference is taken between the tokens both texts share, aligned in order by the core
(attention/compare.py): notebook 004's "flies" in "time flies like an arrow" and "fruit
flies like a banana".
"""

from __future__ import annotations

import streamlit as st

from components import compute
from components.charts import show
from components.heatmap import heatmap
from components.page_state import shorten

FALLBACK_TEXT = "fruit flies like a banana"  # the notebooks' second sentence
SIDE_BY_SIDE_SIZE = 210  # px: the plot; axis labels and legend add about 150 px, and two must fit side by side
DIFFERENCE_SIZE = 260  # px: beside the largest change


def render(context) -> None:
    state = context.state
    text_a = context.text
    text_b = context.text_b if context.text_b.strip() else FALLBACK_TEXT
    if not context.text_b.strip():
        st.info("No second text in the sidebar, so the text is compared with the notebooks' "
                "“fruit flies like a banana”. Type another under *Second sentence* to compare your own.",
                icon=":material/compare_arrows:")
    st.caption("The two texts run separately here, each as its own [CLS] … [SEP], not as a sentence pair; "
               "the sidebar's source, layer, head and scaling apply to both, and both heatmaps share one "
               "colour scale.")
    trace_a = context.trace(text=text_a, text_b="")
    trace_b = context.trace(text=text_b, text_b="")
    if trace_b.dropped_tokens[0]:
        st.warning(f"Text B is longer than the model reads: its last {trace_b.dropped_tokens[0]} tokens were "
                   "dropped.", icon=":material/content_cut:")
    label = f"layer {state.layer}, head {state.head}"
    tokens_a, tokens_b = list(trace_a.tokens[0]), list(trace_b.tokens[0])
    weights_a, weights_b = trace_a["weights"][0], trace_b["weights"][0]  # (T_a, T_a), (T_b, T_b)

    # One colour scale for both texts: from 0 to the larger of their largest weights.
    shared_scale = [0.0, float(max(weights_a.max(), weights_b.max()))]
    for column, name, text, tokens, weights in zip(st.columns(2, gap="medium"), "AB", (text_a, text_b),
                                                   (tokens_a, tokens_b), (weights_a, weights_b), strict=True):
        with column:
            st.caption(f"Text {name}, {label}: {shorten(text, 80)}")
            chart = heatmap(weights, tokens, tokens, title=f"Text {name}: weights",
                            size=SIDE_BY_SIDE_SIZE, domain=shared_scale, canvas=True)
            show(chart, key=f"chart-weights-{name.lower()}")

    positions_a, positions_b = compute.aligned_positions(tokens_a, tokens_b)  # (K,) each
    st.subheader("Where they differ")
    if positions_a.size == 0:
        st.info("The two texts share no token, so there is nothing to subtract.")
        return
    difference = compute.aligned_difference(weights_a, weights_b, positions_a, positions_b)  # (K, K)
    shared = [tokens_a[i] for i in positions_a]
    left, right = st.columns([3, 2], gap="medium")
    with left:
        chart = heatmap(difference, shared, shared, title="weights A − weights B",
                        scheme="redblue", size=DIFFERENCE_SIZE, canvas=True)
        show(chart, key="chart-difference")
    with right:
        _largest_change(compute.largest_change(difference, positions_a, positions_b), shared, weights_a, weights_b)
        st.caption(
            f"Tokens aligned with difflib.SequenceMatcher over the two token lists: the {len(shared)} tokens "
            "both texts share, matched in order; tokens found in only one text have no counterpart and are left "
            "out. Position by position would subtract the weights of different words. Each cell is a weight "
            "from a full row (not renormalised): blue where text A attends more, red where text B does."
        )


def _largest_change(change, shared, weights_a, weights_b) -> None:
    st.metric("Largest change, A − B", f"{change.difference:+.3f}",
              help="The aligned (query, key) pair whose weight differs most between the two texts.")
    if change.difference == 0.0:
        st.caption("The two texts give the shared tokens exactly the same weights.")
        return
    (a_row, a_column), (b_row, b_column) = change.position_a, change.position_b
    st.text(f"query {shared[change.row]} → key {shared[change.column]}\n"
            f"A: {weights_a[a_row, a_column]:.3f} (positions {a_row} → {a_column})\n"
            f"B: {weights_b[b_row, b_column]:.3f} (positions {b_row} → {b_column})")
