"""The two sentences the guided lesson's first step and its contextual representations compare one word in, and the
word, picked by the reader.

Each of the two steps has a select box of its own, and the two share the reader's choice, kept in the session apart
from the boxes: a pick in either is the word of both, and it outlives the steps between, where neither box is drawn
(a widget's own state goes with the last run that drew it).
"""

from __future__ import annotations

import streamlit as st

from attention.analyses.lesson import NOTEBOOK_PAIR, SharedWord, shared_word, shared_words, telling_word, word_text

CHOSEN_WORD = "lesson_word"  # the word the reader picked, in the session; the select boxes' keys end in the step


def word_key(step: str) -> str:
    """The select box's key in the step of this name (lesson_steps.STEP_TITLES)."""
    return f"{CHOSEN_WORD}_{step}"


def compared_pair(context, step: str) -> tuple[str, str, SharedWord, str]:
    """Sentence A, sentence B, the token compared in both (picked by the reader in the select box of the step of
    this name) and a caption saying which.

    A is always the sidebar's text. B is its second sentence when the two share a whole word; else the picked
    word on its own, with no sentence around it. The notebooks' pair is left for a text with no whole word."""
    text = context.text
    own = context.encoding(text=text, text_b="")
    if context.text_b.strip():
        words = shared_words(own, context.encoding(text=context.text_b, text_b=""))
        if words:
            return text, context.text_b, _word_picker(words, step), "Sentences A and B are the sidebar's two texts."
        why = "The sidebar's two texts share no whole word, so B is the word on its own."
    else:
        why = "No second sentence is typed, so B is the word on its own, with no sentence around it."
    words = shared_words(own, own)
    if words:
        picked = _word_picker(words, step)
        alone_text = word_text(picked.word)  # GPT-2's "␣bank" is read from " bank"
        alone = shared_words(own, context.encoding(text=alone_text, text_b=""))
        found = next((w for w in alone if w.word == picked.word), None)
        if found is not None:
            return text, alone_text, SharedWord(picked.word, picked.first_index, found.second_index), (
                f"{why} To compare it with its use in another sentence, type that sentence in the sidebar's "
                "“Second sentence (optional)” box, or pick the notebooks' pair in its Example list.")
    first, second = NOTEBOOK_PAIR
    found = shared_word(context.encoding(text=first, text_b=""), context.encoding(text=second, text_b=""))
    return first, second, found, "The sidebar's text has no whole word to compare, so this uses the notebooks' pair."


def _word_picker(words: list[SharedWord], step: str) -> SharedWord:
    """A select box of the words to compare, showing the reader's choice (the first word that is not a stop word
    until they pick one, or when a new text lacks it)."""
    options = [w.word for w in words]
    if st.session_state.get(CHOSEN_WORD) not in options:  # a new text: its own default
        st.session_state[CHOSEN_WORD] = telling_word(words).word
    key = word_key(step)
    st.session_state[key] = st.session_state[CHOSEN_WORD]
    chosen = st.selectbox("Token to compare", options, key=key, on_change=_picked, args=(key,),
                          help="A whole word that both sentences have; common words (the, of, …) change least.")
    return words[options.index(chosen)]


def _picked(key: str) -> None:
    st.session_state[CHOSEN_WORD] = st.session_state[key]
