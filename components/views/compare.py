"""Two texts side by side: one layer and head for each, and where their attention differs.

The texts run separately (each its own [CLS] … [SEP]), not as a sentence pair. Their
tokens are aligned with difflib.SequenceMatcher, so the difference is taken between
tokens both texts share, in the same order: notebook 004's "flies" in "time flies like
an arrow" and "fruit flies like a banana".
"""

from __future__ import annotations

import difflib

import numpy as np
import streamlit as st

from components.charts import show
from components.heatmap import heatmap
from components.page_state import shorten

FALLBACK_TEXT = "fruit flies like a banana"  # the notebooks' second sentence
SIDE_BY_SIDE_SIZE = 210  # px: the plot; axis labels and legend add about 150 px, and two must fit side by side
DIFFERENCE_SIZE = 260  # px: beside the largest change


def aligned_positions(tokens_a: list[str], tokens_b: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Positions (K,) in each text of the tokens they share, matched in order by difflib.SequenceMatcher."""
    matcher = difflib.SequenceMatcher(a=list(tokens_a), b=list(tokens_b), autojunk=False)
    pairs = [(block.a + i, block.b + i) for block in matcher.get_matching_blocks() for i in range(block.size)]
    positions_a, positions_b = zip(*pairs, strict=True) if pairs else ((), ())
    return np.asarray(positions_a, dtype=int), np.asarray(positions_b, dtype=int)


def aligned_difference(weights_a: np.ndarray, weights_b: np.ndarray, positions_a: np.ndarray,
                       positions_b: np.ndarray) -> np.ndarray:
    """(K, K) weights_a − weights_b between the aligned tokens, as they are in each full (T, T) matrix."""
    return weights_a[np.ix_(positions_a, positions_a)] - weights_b[np.ix_(positions_b, positions_b)]


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

    positions_a, positions_b = aligned_positions(tokens_a, tokens_b)
    st.subheader("Where they differ")
    if positions_a.size == 0:
        st.info("The two texts share no token, so there is nothing to subtract.")
        return
    difference = aligned_difference(weights_a, weights_b, positions_a, positions_b)  # (K, K)
    shared = [tokens_a[i] for i in positions_a]
    left, right = st.columns([3, 2], gap="medium")
    with left:
        chart = heatmap(difference, shared, shared, title="weights A − weights B",
                        scheme="redblue", size=DIFFERENCE_SIZE, canvas=True)
        show(chart, key="chart-difference")
    with right:
        _largest_change(difference, shared, positions_a, positions_b, weights_a, weights_b)
        st.caption(
            f"Tokens aligned with difflib.SequenceMatcher over the two token lists: the {len(shared)} tokens "
            "both texts share, matched in order; tokens found in only one text have no counterpart and are left "
            "out. Position by position would subtract the weights of different words. Each cell is a weight "
            "from a full row (not renormalised): blue where text A attends more, red where text B does."
        )


def _largest_change(difference, shared, positions_a, positions_b, weights_a, weights_b) -> None:
    row, column = np.unravel_index(np.abs(difference).argmax(), difference.shape)
    change = float(difference[row, column])
    st.metric("Largest change, A − B", f"{change:+.3f}",
              help="The aligned (query, key) pair whose weight differs most between the two texts.")
    if change == 0.0:
        st.caption("The two texts give the shared tokens exactly the same weights.")
        return
    a_row, a_column, b_row, b_column = positions_a[row], positions_a[column], positions_b[row], positions_b[column]
    st.text(f"query {shared[row]} → key {shared[column]}\n"
            f"A: {weights_a[a_row, a_column]:.3f} (positions {a_row} → {a_column})\n"
            f"B: {weights_b[b_row, b_column]:.3f} (positions {b_row} → {b_column})")
