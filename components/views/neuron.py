"""The neuron view (as bertviz's): how one query token's row of attention is made, number by number.

The query vector q, every key vector k_j, their element-wise products q ⊙ k_j, the sums
q · k_j, the scaled scores and the softmax, for the current layer, head, source and scaling.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from components import compute, controls, page_state
from components.charts import show
from components.heatmap import heatmap
from components.tables import numbers_html

DIMENSIONS = "dimension of the head"
QUERY_HEIGHT = 24  # px: q is one row, a strip above K


def render(context) -> None:
    trace = context.trace()
    tokens = list(trace.tokens[0])
    query = _query_select(context.state, tokens)
    numbers = compute.neuron_view(trace, query)
    similarity = "cos(q, k)" if trace.settings.similarity == "cosine" else "q · k"
    scaling = next(step.formula for step in trace.steps if step.name == "scaled")
    key_labels = [f"{j}: {token}" for j, token in enumerate(tokens)]

    st.caption(f"Query token {query}, layer {context.state.layer}, head {context.state.head}. "
               f"Multiply q with each key k_j dimension by dimension (q ⊙ k_j), add the products up "
               f"({similarity}), scale ({scaling}) and take the softmax: the last column is this token's row "
               "of the attention weights.")
    st.html(numbers_html(_numbers_table(numbers, tokens, similarity), "neuron-table", bars=("weight",)))
    _vectors_chart(numbers.query[None, :], [key_labels[query]], "query vector q", "query token", "query",
                   height=QUERY_HEIGHT)
    _vectors_chart(numbers.keys, key_labels, "key vectors k_j", "key token", "keys")
    _vectors_chart(numbers.products, key_labels, f"q ⊙ k_j: each row sums to {similarity}", "key token", "products")
    if trace.settings.similarity == "cosine":
        st.caption("Cosine similarity: q and every k_j are scaled to length 1 first, so the products sum to "
                   "the cosine.")


def _vectors_chart(matrix, rows: list[str], title: str, row_title: str, key: str, height: int | None = None) -> None:
    """A (rows, d) heatmap of vectors, one row per token."""
    chart = heatmap(matrix, rows, [str(i) for i in range(matrix.shape[1])], title=title,
                    row_title=row_title, column_title=DIMENSIONS, scheme="redblue", canvas=True)
    if height is not None:
        chart = chart.properties(height=height)
    show(chart, key=f"chart-{key}")


def _query_select(state, tokens: list[str]) -> int:
    """The query token's selector; a position past the text's end (from a link) becomes the last token."""
    last = len(tokens) - 1
    if state.query > last:
        st.warning(f"query={state.query} does not exist (the text has {len(tokens)} tokens: 0 to {last}); "
                   f"showing query={last}.", icon=":material/info:")
        controls.request(query=last)
        st.query_params.from_dict(page_state.to_query(dataclasses.replace(state, query=last)))
    return controls.bound_widget(st.selectbox, "query", "Query token", options=range(len(tokens)),
                                 format_func=lambda i: f"{i}: {tokens[i]}")


def _numbers_table(numbers, tokens: list[str], similarity: str) -> pd.DataFrame:
    """One row per key token: the score before scaling, after it, and the softmax weight."""
    return pd.DataFrame({
        "key": range(len(tokens)),
        "key token": tokens,
        similarity: numbers.dots,
        "scaled": numbers.scaled,
        "weight": numbers.weights,
    })
