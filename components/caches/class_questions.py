"""The page's own answers to the class's questions (their store: caches/stores.questions): each computed question
made from what a page state shows (the core computes the answer,
attention/labs/class_questions.py, on the layer and trace the page's caches hold).
"""

from __future__ import annotations

from attention.dissect.heads import head_weights
from attention.labs import class_questions
from components.caches import layers
from components.server.question_store import (
    MAX_CHOICE_CHARS,
    MAX_PROMPT_CHARS,
    Question,
)

# The reveal's view per kind: what a view's parameters become at the reveal (the rest stay the class's).
REVEAL_VIEWS = {"key": "neuron", "mask": "head", "previous": "heads", "entropy": "lab"}


def token_labels(state) -> tuple[str, ...]:
    """The tokens of the page's text as the questions name them, "flies (2)"."""
    return class_questions.token_labels(_trace(state).tokens[0])


def computed_question(kind: str, state, query: int | None = None) -> Question:
    """The question of kind about what state (a PageState) shows, with the page's answer."""
    trace = _trace(state)
    tokens = trace.tokens[0]
    view = {"view": REVEAL_VIEWS[kind], "layer": str(state.layer), "head": str(state.head)}
    if kind == "key":
        computed = class_questions.most_attended_key(trace["weights"][0], tokens, query)  # (T, T) weights
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
    elif kind == "entropy":
        computed = class_questions.entropy_when_head_size_doubles(trace.head_size, len(tokens))
        prompt = (f"Without the √d_k scaling, what happens to the attention weights' entropy when d_k doubles "
                  f"from {trace.head_size} to {2 * trace.head_size}?")
    else:
        raise ValueError(f"the page computes no answer to a question of kind {kind!r}")
    return Question(kind, prompt[:MAX_PROMPT_CHARS], tuple(choice[:MAX_CHOICE_CHARS] for choice in computed.choices),
                    computed.answer, computed.why, tuple(view.items()))


def _trace(state):
    return layers.trace(state.model, state.text, state.text_b, layers.settings_for(state))
