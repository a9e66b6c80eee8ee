"""The guided lesson's steps: every step a model's lesson may have, by name and in order, and which of them a model's
lesson has (numbered 1, 2, … in a link, step=, in that order). The lesson's navigation, its link and the welcome
card's count follow these. Apart from the lesson's view (components/views/lesson.py) and without Streamlit or
torch at import, because the link parser (page_state) reads it before torch or any view is imported."""

from __future__ import annotations

from collections.abc import Callable, Iterable

# Every step a lesson may have, by name, in the lesson's order, with its title.
STEP_TITLES = {
    "tokens": "Tokens, ids and token embeddings",
    "identity": "Simplified self-attention: E·Eᵀ",
    "projections": "Query, key and value projections",
    "rotary": "Rotary positions: q and k turned by position",
    "shared": "Shared heads: fewer keys and values than queries",
    "mask": "Masking: which keys a query may look at",
    "softmax": "Scaling and softmax",
    "head": "One trained head",
    "moves": "What a head moves, not only what it weighs",
    "heads": "All heads: concatenation and output projection",
    "block": "The block: residual stream, norm and MLP",
    "context": "Contextual representations",
    "next": "The next token",
}
# Each step as the step selector names it after its number, short enough for a dozen of them on a row or two.
STEP_LABELS = {"tokens": "Tokens", "identity": "E·Eᵀ", "projections": "Q, K, V", "rotary": "RoPE",
               "shared": "Shared K, V", "mask": "Mask", "softmax": "Softmax", "head": "One head",
               "moves": "What moves", "heads": "All heads", "block": "Block", "context": "Context",
               "next": "Next token"}
# The steps a lesson has only when the model's trained heads do what they show, and the trace's step that says so
# (attention/dissect/outline.py: RoPE's angles when q and k turn by position, the map of shared heads when the query
# heads share fewer key and value heads). A BERT's and a GPT-2's lessons have neither.
ONLY_WITH = {"rotary": "RoPE angles", "shared": "shared head of each query head"}
STEP_ATTRIBUTE = "lesson-step"  # the body's data-lesson-step: the step the browser shows (lesson_nav's script sets it)
DRAWN_ATTRIBUTE = "lesson-drawn"  # the body's data-lesson-drawn: the steps drawn, "5 6 4" (lesson_nav's script sets it)
# The simplified self-attention: the layer's input as query, key and value (Q = K = V = E), no scaling, the one head
# that gives. Every other step shows the model's trained heads, whatever the source beside the lesson.
SIMPLIFIED_STEP = "identity"
SIMPLIFIED = {"source": "identity", "scaling": "none", "head": 0}


def lesson_for(rotates: bool, shares: bool) -> tuple[str, ...]:
    """The names of a model's steps, in order: every step, but the rotary one where the trained q and k do not turn
    by position and the shared one where every query head has its own keys and values."""
    has = {"rotary": rotates, "shared": shares}
    return tuple(name for name in STEP_TITLES if has.get(name, True))


def lesson_of(trace_steps: Iterable[str]) -> tuple[str, ...]:
    """The names of a model's steps, from the names of the steps of its trained trace or outline."""
    names = set(trace_steps)
    return lesson_for(ONLY_WITH["rotary"] in names, ONLY_WITH["shared"] in names)


def trained_head(head: int, num_heads: int) -> dict:
    """The controls changed to the model's trained weights (source "bert", so named in a link), at the head chosen
    beside the lesson or, where a random source gives more heads than the model has, the model's last."""
    return {"source": "bert", "head": min(head, num_heads - 1)}


def computed_with(name: str, head: int, num_heads: int) -> dict:
    """The controls the step of this name computes its charts and sentences with, changed from those beside the
    lesson: so that the shapes panel beside a step describes what the step shows."""
    return dict(SIMPLIFIED) if name == SIMPLIFIED_STEP else trained_head(head, num_heads)


def step_outlines(outline: Callable[..., object], head: int, num_heads: int) -> dict[int, tuple]:
    """Each step's steps of the trace as the shapes panel lists them, by the step's number in this model's lesson:
    outline(**changes) is the page's outline of the text with some controls changed (ViewContext.outline), head and
    num_heads the chosen head and the model's head count."""
    trained = outline(**trained_head(head, num_heads))
    simplified = outline(**SIMPLIFIED)
    return {number: (simplified if name == SIMPLIFIED_STEP else trained).steps
            for number, name in enumerate(lesson_of(trained.names), start=1)}
