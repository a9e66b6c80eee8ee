"""Attention Anatomy: BERT's self-attention dissected step by step, on live data.

Thin on purpose: page config, sidebar controls -> cached computation -> drawing.
The numbers come from attention/ (no Streamlit there); the drawing from components/.
"""

from __future__ import annotations

import streamlit as st

from attention import BUNDLED_MODEL, ModelLoadError
from components import compute, controls, page_state
from components.shapes_panel import shapes_panel
from components.single_head import HeadView, head_view
from components.tokens import token_chips

LETTERS = "B batch · T tokens · C hidden size · nh heads · d head size"

st.set_page_config(page_title="Attention Anatomy", page_icon=":material/grid_on:", layout="wide")
st.sidebar.title("Attention Anatomy")

names = compute.model_names()
url_notices = controls.start({key: st.query_params.get_all(key) for key in st.query_params}, names)
text, text_b = controls.text_inputs()
model_name = controls.model_select(names)
try:
    loaded = compute.model(model_name)
except ModelLoadError as error:
    controls.request(model=BUNDLED_MODEL)
    st.session_state["_url_notices"] = [*url_notices, f"{error} Showing the bundled model instead."]
    st.rerun()
state, range_notices = controls.attention_controls(loaded.shape)
st.query_params.from_dict(page_state.to_query(state))

st.title("Attention Anatomy")
st.caption(f"{model_name}: {loaded.shape.num_layers} layers × {loaded.shape.num_heads} heads, "
           f"hidden size {loaded.shape.hidden_size}. Every number below is computed live from this text.")
for notice in [*url_notices, *range_notices]:
    st.warning(notice, icon=":material/info:")

if not text.strip():
    st.info("Type a sentence in the sidebar (or pick an example) to see its attention.")
    st.stop()

main, side = st.columns([3, 1], gap="large")
with main:
    trace = compute.trace(model_name, text, text_b, compute.settings_for(state))
    tokens = list(trace.tokens[0])
    if trace.dropped_tokens[0]:
        st.warning(f"The text is longer than the {loaded.max_tokens} tokens BERT reads: the last "
                   f"{trace.dropped_tokens[0]} tokens were dropped.", icon=":material/content_cut:")
    encoding = compute.encoding(model_name, text, text_b)
    token_chips(tokens, encoding.special_tokens_mask[0].tolist())
    if state.source == "bert":
        proof = compute.proof(model_name, text, text_b, state.layer, state.head)
        note = ("The same head computed here from scratch (√d_k scaling) against transformers' BertSelfAttention."
                if state.scaling == "sqrt" else
                "Measured with √d_k, the scaling BERT was trained with; the heatmap uses your choice instead.")
    else:
        proof, note = None, "The proof compares against transformers' trained heads: choose the bert source."
    scaled_formula = next(step.formula for step in trace.steps if step.name == "scaled")
    head_view(HeadView(
        tokens=tokens,
        scores=trace["scores"][0],
        scaled=trace["scaled"][0],
        weights=trace["weights"][0],
        context=trace["context"][0],
        divisor_text=f"Scaled scores = {scaled_formula}",
        label=f"layer {state.layer}, head {state.head}",
    ), proof, note)
with side:
    shapes_panel(trace.steps, LETTERS)
