"""The guided lesson's steps, by number: the one list the lesson's navigation, its link (step=1..9) and the welcome
card's count follow. Apart from the lesson's view (components/views/lesson.py) and without Streamlit, because the
link parser (page_state) reads it before torch or any view is imported."""

from __future__ import annotations

from collections.abc import Callable

STEP_TITLES = {
    1: "Tokens, ids and token embeddings",
    2: "Simplified self-attention: E·Eᵀ",
    3: "Query, key and value projections",
    4: "Masking: which keys a query may look at",
    5: "Scaling and softmax",
    6: "One trained head",
    7: "What a head moves, not only what it weighs",
    8: "All heads: concatenation and output projection",
    9: "Contextual representations",
}
# Each step as the step selector names it, short enough for nine of them on a row.
STEP_LABELS = {1: "1 Tokens", 2: "2 E·Eᵀ", 3: "3 Q, K, V", 4: "4 Mask", 5: "5 Softmax", 6: "6 One head",
               7: "7 What moves", 8: "8 All heads", 9: "9 Context"}
STEP_ATTRIBUTE = "lesson-step"  # the body's data-lesson-step: the step the browser shows (lesson_nav's script sets it)
# Step 2, the simplified self-attention: the layer's input as query, key and value (Q = K = V = E), no scaling, the
# one head that gives. Every other step shows the model's trained heads, whatever the source beside the lesson.
SIMPLIFIED_STEP = 2
SIMPLIFIED = {"source": "identity", "scaling": "none", "head": 0}


def trained_head(head: int, num_heads: int) -> dict:
    """The controls changed to the model's trained weights (source "bert", so named in a link), at the head chosen
    beside the lesson or, where a random source gives more heads than the model has, the model's last."""
    return {"source": "bert", "head": min(head, num_heads - 1)}


def computed_with(step: int, head: int, num_heads: int) -> dict:
    """The controls a step's charts and sentences are computed with, changed from those beside the lesson: so that
    the shapes panel beside a step describes what the step shows."""
    return dict(SIMPLIFIED) if step == SIMPLIFIED_STEP else trained_head(head, num_heads)


def step_outlines(outline: Callable[..., object], head: int, num_heads: int) -> dict[int, tuple]:
    """Each step's steps of the trace as the shapes panel lists them: outline(**changes) is the page's outline of
    the text with some controls changed (ViewContext.outline), head and num_heads the chosen head and the model's
    head count."""
    return {step: outline(**computed_with(step, head, num_heads)).steps for step in STEP_TITLES}
