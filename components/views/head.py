"""The main view: one head of one layer, stage by stage, as heatmaps.

With a sentence pair, the weights can be narrowed to one block (A to B, B to A, within
A, within B: bertviz's sentence-pair view); [CLS] and [SEP] can be hidden, the
remaining weights renormalised.
"""

from __future__ import annotations

import re

import numpy as np
import streamlit as st

from components import compute, controls
from components.charts import show
from components.downloads import chart_downloads, csv_download
from components.heatmap import heatmap
from components.tables import head_csv

# Below this the from-scratch weights agree with transformers to float32 precision.
PROOF_TOLERANCE = 1e-5
STAGES = ("Attention weights", "Raw scores Q·Kᵀ", "Scaled scores", "Context vectors")
PAIR_LABELS = {"all": "all", "a_to_b": "A → B", "b_to_a": "B → A", "within_a": "within A", "within_b": "within B"}


def render(context) -> None:
    state = context.state
    trace = context.trace()
    tokens = list(trace.tokens[0])
    label = f"layer {state.layer}, head {state.head}"
    stem = re.sub(r"\W+", "-", label)  # "layer-2-head-5"

    which, renormalise = _filters(bool(context.text_b.strip()))
    rows, keys, shown = compute.visible_weights(trace, context.encoding(), which, renormalise)  # shown (R, K)
    row_tokens, key_tokens = [tokens[i] for i in rows], [tokens[i] for i in keys]

    st.subheader(f"Layer {state.layer}, head {state.head}", anchor=False)
    _stages(trace, shown, rows, keys, row_tokens, key_tokens, renormalise, stem)
    proof_column, about_column = st.columns(2, gap="medium")
    with proof_column:
        _proof(context)
    with about_column:
        st.markdown(
            "Each **row** is one query token; its colours show how it spreads its attention over "
            "the key tokens across. Every full row sums to 1."
        )
        csv_download(lambda: head_csv(tokens, trace["scaled"][0], trace["weights"][0]), f"attention-{stem}")
        st.caption("The whole head, one row per (query, key) pair: the scaled score before softmax "
                   "and the weight after it.")



def _stages(trace, shown, rows, keys, row_tokens, key_tokens, renormalise: bool, stem: str) -> None:
    """The weights, or a stage before or after them: one chart, chosen with a row of buttons.

    Only the chosen stage is computed and drawn. Buttons and not tabs: on every slider move the
    browser redrew the tabs for about 20 ms, a row of buttons for next to nothing.
    """
    stage = st.segmented_control("Stage", STAGES, default=STAGES[0], required=True, key="head_stage",
                                 label_visibility="collapsed")
    block = np.ix_(rows, keys)
    if stage == STAGES[0]:
        title = STAGES[0] + (" (renormalised without [CLS]/[SEP])" if renormalise else "")
        _chart(shown, row_tokens, key_tokens, title, "weights", stem)
    elif stage == STAGES[1]:
        _chart(trace["scores"][0][block], row_tokens, key_tokens, STAGES[1], "scores", stem, "redblue")
    elif stage == STAGES[2]:
        formula = next(step.formula for step in trace.steps if step.name == "scaled")
        _chart(trace["scaled"][0][block], row_tokens, key_tokens, f"Scaled scores = {formula}", "scaled", stem,
               "redblue")
    else:
        head_context = trace["context"][0][rows]  # (rows, d)
        dims = [str(i) for i in range(head_context.shape[1])]
        _chart(head_context, row_tokens, dims, "Context = weights · V", "context", stem, "redblue",
               column_title="dimension of the head")


def _filters(has_pair: bool) -> tuple[str, bool]:
    """The pair filter and the special-token toggle; returns which block to show and whether to hide them."""
    pair_column, special_column = st.columns([3, 2])
    which = "all"
    if has_pair:
        which = controls.bound_widget(pair_column.segmented_control, "pair", "Sentence pair: queries → keys",
                                      options=list(PAIR_LABELS), format_func=PAIR_LABELS.get)
    hide = controls.bound_widget(special_column.toggle, "hide_special", "Hide [CLS] and [SEP]",
                                 help="Drops the special tokens and rescales each row over the remaining keys, "
                                      "so that it sums to 1 again.")
    if hide:
        st.caption("[CLS] and [SEP] hidden: each row's remaining weights are rescaled to sum to 1.")
    return which, hide


def _chart(matrix, rows, columns, title, key, file_stem, scheme="blues", column_title="key token") -> None:
    """A heatmap with its PNG and SVG buttons; key names the chart on the page (chart-<key>).

    The title on the page stays the same from head to head, so that Streamlit only swaps the
    data in; the downloaded files say which layer and head they show.
    """
    if matrix.size == 0:
        st.info("This filter leaves no tokens to show.")
        return
    chart = heatmap(matrix, rows, columns, title=title, column_title=column_title, scheme=scheme, canvas=True)
    show(chart, key=f"chart-{key}")
    chart_downloads(chart, key, f"{key}-{file_stem}", title=f"{title} — {file_stem.replace('-', ' ')}")


def _proof(context) -> None:
    state = context.state
    if state.source != "bert":
        st.info("The proof compares against transformers' trained heads: choose the bert source.")
        return
    proof = compute.proof(context.model_name, context.text, context.text_b, state.layer, state.head)
    verdict = "equal to float32 precision" if proof <= PROOF_TOLERANCE else "NOT equal"
    note = ("The same head computed here from scratch against transformers' BertSelfAttention."
            if state.scaling == "sqrt" else
            "Measured with √d_k, the scaling BERT was trained with; the heatmaps use your choice instead.")
    st.metric("Largest difference from transformers' own attention", f"{proof:.1e}",
              help="max |from-scratch weights − transformers' attention weights| over this head's matrix")
    st.caption(f"{verdict}. {note}")
