"""The sidebar: text, model and attention controls. Draws widgets and returns the user's choice.

Every widget's key is a query parameter's name. Values live in a shadow copy in the
session as well as in the widgets, because Streamlit forgets a widget's value when the
widget is hidden (the τ slider for other scalings) or when its range changes (the
head slider when the source changes); the shadow brings them back.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from attention import SCALINGS, SOURCES, ModelShape, TraceSettings
from components import page_state
from components.page_state import PageState

PRESETS = {
    "time flies like an arrow / fruit flies like a banana": ("time flies like an arrow", "fruit flies like a banana"),
    "time flies like an arrow": ("time flies like an arrow", ""),
    "let's tokenize something?": ("let's tokenize something?", ""),
    "I am looking for a hot job": ("I am looking for a hot job", ""),
}
SOURCE_HELP = {
    "identity": "Q = K = V = X: the simplified self-attention, scores X·Xᵀ",
    "random": "fresh nn.Linear projections, reproducible from the seed",
    "bert": "the trained weights of the chosen layer",
}
SCALING_LABELS = {"none": "none", "sqrt": "√d_k", "linear": "d_k", "temperature": "τ"}
_SHADOW = "_page_state"


def start(query: dict[str, list[str]], models: tuple[str, ...]) -> list[str]:
    """On a session's first run, take the state from the URL; return the notices about it."""
    if _SHADOW not in st.session_state:
        state, notices = page_state.from_query(query, models)
        st.session_state[_SHADOW] = dataclasses.asdict(state)
        st.session_state["_url_notices"] = notices
    return st.session_state["_url_notices"]


def request(**values) -> None:
    """Change controls from code: takes effect when the widgets are next drawn (after st.rerun)."""
    st.session_state[_SHADOW].update(values)
    for key in values:
        st.session_state.pop(key, None)


def view_select(labels: dict[str, str]) -> str:
    return bound_widget(st.sidebar.radio, "view", "View", options=list(labels), format_func=labels.get)


def text_inputs() -> tuple[str, str]:
    st.sidebar.selectbox("Example", list(PRESETS), index=None, placeholder="Pick an example from the notebooks…",
                         key="preset", on_change=_apply_preset)
    text = bound_widget(st.sidebar.text_area, "text", "Text", height=90, max_chars=page_state.MAX_TEXT_CHARS,
                        help="Any text; BERT reads at most 512 tokens, and the rest is cut off with a notice.")
    text_b = bound_widget(st.sidebar.text_input, "text_b", "Second sentence (optional)",
                          max_chars=page_state.MAX_TEXT_CHARS,
                          help="Makes a sentence pair: [CLS] A [SEP] B [SEP], with segment ids 0 and 1.")
    return text, text_b


def model_select(models: tuple[str, ...]) -> str:
    return bound_widget(st.sidebar.selectbox, "model", "Model", options=models,
                   help="The bundled all-MiniLM-L6-v2 works offline; Hub models download on first use.")


def attention_controls(shape: ModelShape, view: str) -> tuple[PageState, list[str]]:
    """Source, layer, head, head_dim, scaling, τ and seed, within the ranges this model allows."""
    shadow = st.session_state[_SHADOW]
    pending = PageState(**{**shadow, **_widget_values()})
    fitted, notices = page_state.fit_to_model(pending, shape)
    shadow.update({k: getattr(fitted, k) for k in ("layer", "head", "head_dim")})
    for key in ("layer", "head", "head_dim"):
        st.session_state.pop(key, None)  # taken again from the shadow, now in range

    sidebar = st.sidebar
    source = bound_widget(sidebar.segmented_control, "source", "Projection source", options=SOURCES,
                     help=" · ".join(f"{k}: {v}" for k, v in SOURCE_HELP.items()))
    if source == "random":
        head_dim = bound_widget(sidebar.slider, "head_dim", "head_dim (d)", min_value=1, max_value=shape.hidden_size,
                           help=f"Heads are {shape.hidden_size} // d; their concatenation has width heads·d.")
    else:
        fixed = shape.hidden_size if source == "identity" else shape.head_size
        why = "no projection, so d = C" if source == "identity" else (
            f"the trained weights fix it: {shape.hidden_size} / {shape.num_heads} heads")
        sidebar.caption(f"head_dim (d) = {fixed}: {why}.")
        head_dim = shadow["head_dim"]
    layer = _range_slider("layer", "Layer", shape.num_layers)
    num_heads = TraceSettings(source=source, head_dim=head_dim).num_heads(shape)
    head = _range_slider("head", "Head", num_heads)
    scaling = bound_widget(sidebar.segmented_control, "scaling", "Scaling: scores divided by", options=SCALINGS,
                      format_func=SCALING_LABELS.get)
    temperature = shadow["temperature"]
    if scaling == "temperature" or view == "lab":  # the lab compares every scaling with this τ
        low, high = page_state.TEMPERATURE_RANGE
        temperature = bound_widget(sidebar.slider, "temperature", "τ", min_value=low, max_value=high, step=0.05)
    seed = shadow["seed"]
    if source == "random":
        seed = bound_widget(sidebar.number_input, "seed", "Seed", min_value=0, max_value=page_state.MAX_SEED, step=1)
    state = dataclasses.replace(
        fitted, source=source, layer=layer, head=head, head_dim=head_dim,
        scaling=scaling, temperature=temperature, seed=seed,
    )
    return state, notices


def _range_slider(key: str, label: str, count: int) -> int:
    if count == 1:
        st.sidebar.caption(f"{label}: 0 (the only one)")
        st.session_state[_SHADOW][key] = 0
        return 0
    return bound_widget(st.sidebar.slider, key, f"{label} (0 to {count - 1})", min_value=0, max_value=count - 1)


def bound_widget(draw, key: str, label: str, **kwargs):
    """Draw a widget whose value survives being hidden or re-created; keep the shadow in step."""
    shadow = st.session_state[_SHADOW]
    if st.session_state.get(key) is None:
        st.session_state[key] = shadow[key]
    value = draw(label, key=key, **kwargs)
    if value is None:  # a segmented control clicked off: keep the last choice
        value = shadow[key]
    shadow[key] = value
    return value


def _widget_values() -> dict:
    return {k: st.session_state[k] for k in page_state.PARAMS if k in st.session_state and
            st.session_state[k] is not None}


def _apply_preset() -> None:
    choice = st.session_state.get("preset")
    if choice in PRESETS:
        text, text_b = PRESETS[choice]
        request(text=text, text_b=text_b)
