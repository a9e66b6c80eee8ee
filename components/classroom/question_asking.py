"""The teacher's form to ask the class a question, and the question it makes: on the view the class is on, its text,
layer and head, with the page's own answer computed by the core (attention/analyses/class_questions.py).

Which questions a view offers: one head (and the neuron view): the key a token attends to most, and whether its row
still sums to 1 after the mask; all heads of a layer: which head is a previous-token head; any view with a text: what
the entropy does when d_k doubles unscaled (revealed on the scaling lab); and everywhere, the teacher's own question
with 2 to 6 choices and no computed answer. Each computed question names the view the reveal takes the class to.
"""

from __future__ import annotations

import streamlit as st

from attention.analyses import class_questions
from attention.dissect.heads import head_weights
from components.caches import layers
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
# The reveal's view per kind: what a view's parameters become at the reveal (the rest stay the class's).
REVEAL_VIEWS = {"key": "neuron", "mask": "head", "previous": "heads", "entropy": "lab"}
_NUMBERS = ("layer", "head", "query")  # the reveal's parameters that are numbers


def kinds_for(view: str, has_text: bool) -> list[str]:
    """The kinds of question the view the class is on offers."""
    return [kind for kind, (_, views) in KINDS.items()
            if kind == OWN or (has_text and (views is None or view in views))]


def form(state: PageState, on_ask) -> None:
    """The form, in an expander: on Ask, on_ask(question) with the question made from state."""
    with st.expander("Ask the class a question", icon=":material/quiz:"):
        kinds = kinds_for(state.view, bool(state.text.strip()))
        kind = st.selectbox("Question", kinds, format_func=lambda name: KINDS[name][0], key="quiz_kind")
        if kind == OWN:
            _own_form(on_ask)
            return
        query = None
        if kind in ("key", "mask"):
            tokens = _trace(state).tokens[0]
            labels = class_questions.token_labels(tokens)
            query = st.selectbox("Which token's row", range(len(tokens)), format_func=labels.__getitem__,
                                 index=min(state.query, len(tokens) - 1), key="quiz_token")
        if kind == "mask":
            st.caption(f"The mask the page puts on the scores now: `{state.mask}` (the attention controls change it).")
        st.caption(HOW[kind])
        if st.button("Ask the class", key="quiz_ask", type="primary", icon=":material/send:"):
            on_ask(computed_question(kind, state, query))


def computed_question(kind: str, state: PageState, query: int | None = None) -> Question:
    """The question of kind about what state shows, with the page's answer."""
    trace = _trace(state)
    tokens = trace.tokens[0]
    view = {"view": REVEAL_VIEWS[kind], "layer": str(state.layer), "head": str(state.head)}
    if kind == "key":
        weights = trace["weights"][0]  # (T, T)
        computed = class_questions.most_attended_key(weights, tokens, query)
        prompt = (f"Which key will “{tokens[query]}” ({query}) attend to most in layer {state.layer}, "
                  f"head {state.head}?")
        view["query"] = str(query)
    elif kind == "mask":
        scaled, masked = trace["scaled"][0][query], trace["masked"][0][query]  # (T,) each
        computed = class_questions.row_sums_to_one(scaled, masked == scaled)  # a kept key's score gets 0 added
        prompt = (f"Will the row of “{tokens[query]}” ({query}) in layer {state.layer}, head {state.head} still "
                  f"sum to 1 after the mask ({state.mask})?")
    elif kind == "previous":
        layer = layers.layer_weights(state.model, state.text, state.text_b, layers.settings_for(state))
        computed = class_questions.previous_token_head(head_weights(layer)[0])  # (nh, T, T)
        prompt = f"Which of layer {state.layer}'s heads is a previous-token head?"
        view["head"] = str(computed.answer)
    else:
        computed = class_questions.entropy_when_head_size_doubles(trace.head_size, len(tokens))
        prompt = (f"Without the √d_k scaling, what happens to the attention weights' entropy when d_k doubles "
                  f"from {trace.head_size} to {2 * trace.head_size}?")
    return Question(kind, prompt[:MAX_PROMPT_CHARS], tuple(choice[:MAX_CHOICE_CHARS] for choice in computed.choices),
                    computed.answer, computed.why, tuple(view.items()))


def reveal_view(question: Question) -> None:
    """Put the view that shows why on the teacher's page (and so on the class's, which follows it)."""
    values = {name: int(value) if name in _NUMBERS else value for name, value in question.view}
    if values:
        controls.request(**values)


def _own_form(on_ask) -> None:
    prompt = st.text_input("Your question", max_chars=MAX_PROMPT_CHARS, key="quiz_prompt")
    lines = st.text_area(f"Its choices, one a line ({OWN_CHOICES.start} to {OWN_CHOICES.stop - 1})", key="quiz_choices",
                         height=140, max_chars=(MAX_CHOICE_CHARS + 1) * OWN_CHOICES.stop)
    choices = tuple(line.strip()[:MAX_CHOICE_CHARS] for line in lines.splitlines() if line.strip())
    ready = bool(prompt.strip()) and len(choices) in OWN_CHOICES
    if not ready:
        st.caption(f"A question, and {OWN_CHOICES.start} to {OWN_CHOICES.stop - 1} choices.")
    if st.button("Ask the class", key="quiz_ask_own", type="primary", icon=":material/send:", disabled=not ready):
        on_ask(Question(OWN, prompt.strip(), choices))


def _trace(state: PageState):
    return layers.trace(state.model, state.text, state.text_b, layers.settings_for(state))
