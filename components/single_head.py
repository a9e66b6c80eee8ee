"""The main view: one head of one layer, stage by stage, as heatmaps.

Takes numpy arrays and plain values; the app hands them over from the cached trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import streamlit as st

from components.downloads import chart_downloads, csv_download
from components.heatmap import heatmap
from components.tables import head_csv

# Below this the from-scratch weights agree with transformers to float32 precision.
PROOF_TOLERANCE = 1e-5


@dataclass(frozen=True)
class HeadView:
    """What the view draws, for batch row 0 of a trace."""

    tokens: list[str]
    scores: np.ndarray  # (T, T) raw similarity
    scaled: np.ndarray  # (T, T) after the scaling choice
    weights: np.ndarray  # (T, T) softmax rows
    context: np.ndarray  # (T, d) weights · V
    divisor_text: str  # the scaled step's formula, e.g. "scores / √d_k = √32"
    label: str  # "layer 2, head 5", for titles

    @property
    def file_stem(self) -> str:
        return re.sub(r"\W+", "-", self.label)  # "layer-2-head-5"


def head_view(view: HeadView, proof: float | None, proof_note: str) -> None:
    tokens = view.tokens
    left, right = st.columns([3, 2], gap="medium")
    with left:
        _chart(view.weights, tokens, tokens, f"Attention weights — {view.label}", "weights", view.file_stem)
    with right:
        _proof(proof, proof_note)
        st.markdown(
            "Each **row** is one query token; its colours show how it spreads its attention over "
            "the key tokens across. Every row sums to 1."
        )
        csv_download(lambda: head_csv(tokens, view.scaled, view.weights), f"attention-{view.file_stem}")
        st.caption("One row per (query, key) pair: the scaled score before softmax and the weight after it.")

    scores_tab, scaled_tab, context_tab = st.tabs(["Raw scores Q·Kᵀ", "Scaled scores", "Context vectors"])
    with scores_tab:
        _chart(view.scores, tokens, tokens, "Raw scores Q·Kᵀ", "scores", view.file_stem, scheme="redblue")
    with scaled_tab:
        _chart(view.scaled, tokens, tokens, view.divisor_text, "scaled", view.file_stem, scheme="redblue")
    with context_tab:
        dims = [str(i) for i in range(view.context.shape[1])]
        _chart(view.context, tokens, dims, "Context = weights · V", "context", view.file_stem, scheme="redblue",
               column_title="dimension of the head")


def _chart(matrix, rows, columns, title, key, file_stem, scheme="blues", column_title="key token") -> None:
    """A heatmap with its PNG and SVG buttons; key names the chart on the page (chart-<key>)."""
    chart = heatmap(matrix, rows, columns, title=title, column_title=column_title, scheme=scheme)
    st.altair_chart(chart, width="content", key=f"chart-{key}")
    chart_downloads(chart, key, f"{key}-{file_stem}")


def _proof(proof: float | None, note: str) -> None:
    if proof is None:
        st.info(note)
        return
    verdict = "equal to float32 precision" if proof <= PROOF_TOLERANCE else "NOT equal"
    st.metric("Largest difference from transformers' own attention", f"{proof:.1e}",
              help="max |from-scratch weights − transformers' output_attentions| over this head's matrix")
    st.caption(f"{verdict}. {note}")
