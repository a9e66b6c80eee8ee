"""The sidebar's two text boxes and the examples that fill them: what the page reads. A text longer than
page_state.MAX_TEXT_CHARS is cut to it, with a notice under its box. The values are bound as every control's are
(controls.bound_widget): a query parameter each, kept in the session's shadow.
"""

from __future__ import annotations

import streamlit as st

from components.page import page_state
from components.page.controls import bound_widget, request

PRESETS = {
    "time flies like an arrow / fruit flies like a banana": ("time flies like an arrow", "fruit flies like a banana"),
    "time flies like an arrow": ("time flies like an arrow", ""),
    "let's tokenize something?": ("let's tokenize something?", ""),
    "I am looking for a hot job": ("I am looking for a hot job", ""),
}


def text_inputs() -> tuple[str, str]:
    """The sidebar's two texts. A text longer than MAX_TEXT_CHARS is cut to it, with a notice under its box: the
    boxes take no max_chars, since the browser then drops a longer paste whole and says nothing."""
    st.sidebar.selectbox("Example", list(PRESETS), index=None, placeholder="Pick an example from the notebooks…",
                         key="preset", on_change=_apply_preset)
    text = bound_widget(st.sidebar.text_area, "text", "Text", height=90, on_change=_cut_to_limit, args=("text",),
                        help=f"Any text of up to {page_state.MAX_TEXT_CHARS:,} characters; the model reads at most "
                             "so many tokens (its own limit), and the rest is cut off with a notice that says how "
                             "many.")
    _say_if_cut("text")
    text_b = bound_widget(st.sidebar.text_input, "text_b", "Second sentence (optional)", on_change=_cut_to_limit,
                          args=("text_b",),
                          help="Makes a sentence pair: [CLS] A [SEP] B [SEP], with segment ids 0 and 1.")
    _say_if_cut("text_b")
    return text, text_b


def _cut_to_limit(key: str) -> None:
    """A text box's callback (before the run): a text over the limit is cut to it, and how long it was is kept for
    the notice until the text changes again."""
    typed = st.session_state.get(key) or ""
    cut_note = f"_{key}_cut_from"
    st.session_state.pop(cut_note, None)
    if len(typed) > page_state.MAX_TEXT_CHARS:
        st.session_state[key] = typed[:page_state.MAX_TEXT_CHARS]
        st.session_state[cut_note] = len(typed)


def _say_if_cut(key: str) -> None:
    was = st.session_state.get(f"_{key}_cut_from")
    if was is not None:
        st.sidebar.warning(f"The text pasted had {was:,} characters: the page keeps the first "
                           f"{page_state.MAX_TEXT_CHARS:,}.", icon=":material/content_cut:")


def _apply_preset() -> None:
    choice = st.session_state.get("preset")
    if choice in PRESETS:
        text, text_b = PRESETS[choice]
        request(text=text, text_b=text_b)
