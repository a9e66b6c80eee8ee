"""The teacher's form to ask the class a question, and the question it makes: on the view the class is on, its text,
layer and head, with the page's own answer computed by the core (components/caches/class_questions.py).

Which questions a view offers: one head (and the neuron view): the key a token attends to most, and whether its row
still sums to 1 after the mask; all heads of a layer: which head is a previous-token head; any view with a text: what
the entropy does when d_k doubles unscaled (revealed on the scaling lab); and everywhere, the teacher's own question
with 2 to 6 choices and no computed answer. Each computed question names the view the reveal takes the class to.
"""

from __future__ import annotations

import streamlit as st

from components.page import controls
from components.page.page_state import PageState
from components.server.question_store import MAX_CHOICE_CHARS, MAX_PROMPT_CHARS, OWN_CHOICES, Question

OWN = "own"
# Each kind: its label in the form, and the views it is asked from.
KINDS = {
    "key": ("Which key will a token attend to most in this head?", ("head", "neuron")),
    "mask": ("Will a token's row still sum to 1 after the mask?", ("head", "neuron")),
    "previous": ("Which of this layer's heads is a previous-token head?", ("heads",)),
    "entropy": ("What happens to the weights' entropy when d_k doubles without the scaling?", None),
    OWN: ("My own question", None),
}
# How the page computes each kind's answer, said in the form (and, with the numbers, at the reveal).
HOW = {
    "key": "The page's answer: the key of largest weight in the token's row of this head.",
    "mask": "The page's answer: the row's sum after the softmax of the masked scores, against 1 (float32's 1e-5).",
    "previous": "The page's answer: the head whose mean weight on the token just before, α[i, i−1] over the "
                "queries i ≥ 1, is highest.",
    "entropy": "The page's answer: the mean entropy of softmax(q·k) over random unit-variance queries and keys, "
               "unscaled, at this head size and twice it.",
}
_NUMBERS = ("layer", "head", "query")  # the reveal's parameters that are numbers


def kinds_for(view: str, has_text: bool) -> list[str]:
    """The kinds of question the view the class is on offers."""
    return [kind for kind, (_, views) in KINDS.items()
            if kind == OWN or (has_text and (views is None or view in views))]


@st.fragment
def form(on_ask) -> None:
    """The form, in an expander, for the page as it stands: on Ask, on_ask(question) in the button's callback, which
    says whether the class now has the question. A
    callback runs before the run the press starts, whatever that run meets: read as the button's value further down
    the page's run, a press was now and then lost (the round never opened, on a loaded machine).

    A fragment of its own: the kind of question and its token change nothing else, so a pick reruns the form alone.
    A question asked reruns the page, whose card above the form then draws the round."""
    _form(controls.current_state(), on_ask)


def _form(state: PageState, on_ask) -> None:
    # The page's answers need the core (torch): imported when a teacher's form is drawn, never before the sidebar
    from components.caches import class_questions

    with st.expander("Ask the class a question", icon=":material/quiz:"):
        kinds = kinds_for(state.view, bool(state.text.strip()))
        kind = st.selectbox("Question", kinds, format_func=lambda name: KINDS[name][0], key="quiz_kind")
        if kind == OWN:
            _own_form(on_ask)
            return
        if kind in ("key", "mask"):
            labels = class_questions.token_labels(state)
            st.selectbox("Which token's row", range(len(labels)), format_func=labels.__getitem__,
                         index=min(state.query, len(labels) - 1), key="quiz_token")
        if kind == "mask":
            st.caption(f"The mask the page puts on the scores now: `{state.mask}` (the attention controls change it).")
        st.caption(HOW[kind])
        st.button("Ask the class", key="quiz_ask", type="primary", icon=":material/send:", on_click=_ask,
                  args=(on_ask,))


def _ask(on_ask) -> None:
    """The button's callback: the question of the kind and token the form holds, on the page as it stood at the
    press (its last run's state)."""
    from components.caches import class_questions

    kind = st.session_state["quiz_kind"]
    query = st.session_state.get("quiz_token") if kind in ("key", "mask") else None
    _asked(on_ask, class_questions.computed_question(kind, controls.current_state(), query))


def _ask_own(on_ask) -> None:
    """The own question's button's callback: the question and choices as typed, read now (an edit sent with the
    press included)."""
    prompt, choices = st.session_state.get("quiz_prompt", ""), _choices(st.session_state.get("quiz_choices", ""))
    if prompt.strip() and len(choices) in OWN_CHOICES:
        _asked(on_ask, Question(OWN, prompt.strip(), choices))


def _asked(on_ask, question: Question) -> None:
    """Ask the class question; once the class took it, the press's run is the page's, not the form's alone: the
    round is drawn in the card above the form. (st.rerun in a callback makes the interaction's run the whole page's,
    in one run; a flag the form's run read and then rerun the page for took two.)"""
    if on_ask(question):
        st.rerun()


def reveal_view(question: Question) -> None:
    """Put the view that shows why on the teacher's page (and so on the class's, which follows it)."""
    values = {name: int(value) if name in _NUMBERS else value for name, value in question.view}
    if values:
        controls.request(**values)


def _own_form(on_ask) -> None:
    prompt = st.text_input("Your question", max_chars=MAX_PROMPT_CHARS, key="quiz_prompt")
    lines = st.text_area(f"Its choices, one a line ({OWN_CHOICES.start} to {OWN_CHOICES.stop - 1})", key="quiz_choices",
                         height=140, max_chars=(MAX_CHOICE_CHARS + 1) * OWN_CHOICES.stop)
    choices = _choices(lines)
    ready = bool(prompt.strip()) and len(choices) in OWN_CHOICES
    if not ready:
        st.caption(f"A question, and {OWN_CHOICES.start} to {OWN_CHOICES.stop - 1} choices.")
    st.button("Ask the class", key="quiz_ask_own", type="primary", icon=":material/send:", disabled=not ready,
              on_click=_ask_own, args=(on_ask,))


def _choices(lines: str) -> tuple[str, ...]:
    """The choices typed, one a line, each cut to MAX_CHOICE_CHARS."""
    return tuple(line.strip()[:MAX_CHOICE_CHARS] for line in lines.splitlines() if line.strip())
