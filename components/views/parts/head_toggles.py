"""The switch view's toggles: one row of pills per layer, a selected pill a head switched off.

Shared by both of its experiments (the masked word and the sentence embedding); the keys are
switch_off_<layer>, so AppTest drives them as page.pills(key="switch_off_1").
"""

from __future__ import annotations

import streamlit as st

MODEL_KEY = "_switch_model"  # the model the toggles were made for
# A head switched off reads as off: grey and struck through. Streamlit draws a selected pill in pale blue, the
# colour of some attention everywhere else on the page, so a silenced head looked like the one that was on.
_OFF_STYLE = ("<style>[class*='st-key-switch_off_'] button[aria-pressed='true']{background:#ececef !important;"
              "border-color:#9a9aa2 !important;color:#55555c !important}"
              "[class*='st-key-switch_off_'] button[aria-pressed='true'] p{text-decoration:line-through}"
              # The layer's name is its pills' own label, beside them: a toggle reruns the toggles, and a row of
              # columns with the name in one was four elements more to send and draw per layer.
              "[class*='st-key-switch_off_'] [data-testid='stButtonGroup']{display:flex;flex-direction:row;"
              "align-items:center;gap:0.75rem}"
              "[class*='st-key-switch_off_'] [data-testid='stWidgetLabel']{flex:0 0 4.5rem;margin:0}</style>")


def head_toggles(num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """Draw the pills and the reset button; return the (layer, head) pairs switched off."""
    st.html(_OFF_STYLE)
    st.markdown("**Heads switched off** (grey, struck through): click a head to silence it, again to bring it back.")
    heads_off = []
    for layer in range(num_layers):
        chosen = st.pills(f"layer {layer}", list(range(num_heads)), selection_mode="multi", key=toggle_key(layer),
                          format_func=str, wrap=True)
        heads_off += [(layer, head) for head in sorted(chosen)]
    st.button("Switch all heads back on", key="switch_reset", icon=":material/restart_alt:",
              on_click=set_heads_off, args=((), num_layers))
    return tuple(heads_off)


def toggle_key(layer: int) -> str:
    return f"switch_off_{layer}"


def set_heads_off(pairs, num_layers: int) -> None:
    """A button's callback: exactly these (layer, head) pairs off, every other head on."""
    for layer in range(num_layers):
        st.session_state[toggle_key(layer)] = sorted(h for (at, h) in pairs if at == layer)


def forget_toggles_of_other_models(name: str) -> None:
    """Toggles belong to one model's heads: a new model starts with all of its heads on."""
    if st.session_state.get(MODEL_KEY) != name:
        for key in [k for k in st.session_state if k.startswith("switch_off_")]:
            del st.session_state[key]
        st.session_state[MODEL_KEY] = name
