"""The guided lesson's navigation: at the top, the step selector, Previous and Next, the step's title and the one
line of CSS that shows the current step alone; at the foot of each step, its own Previous and Next.

Every step is drawn once, each in a container of its own (components/views/lesson.py); the browser hides all but
one. Moving the step at the top reruns the top alone: it sends a title, three widgets and the CSS, computes
nothing and redraws no chart. A step's foot never changes (step 4's Next always leads to 5), so a move at the top
leaves every foot as it is; a move at a foot reruns the top by its key. The step stays a URL parameter
(classroom.sync writes the link, and the class's view, on every move).
"""

from __future__ import annotations

import streamlit as st

from components.classroom import classroom
from components.page import controls
from components.page.page_state import LESSON_STEPS

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
STEP_LABELS = {1: "1 Tokens", 2: "2 E·Eᵀ", 3: "3 Q, K, V", 4: "4 Mask", 5: "5 Softmax", 6: "6 One head",
               7: "7 What moves", 8: "8 All heads", 9: "9 Context"}
NAVIGATION = "lesson_navigation"  # the top's fragment key, by which a move at a foot reruns it
STEP_KEY = "lesson_step_"  # + the step: its container's key, and the CSS class (st-key-…) the browser hides it by


def step_key(step: int) -> str:
    return f"{STEP_KEY}{step}"


def shown_alone(step: int) -> str:
    """CSS that hides every step's container but step's, and the box Streamlit wraps it in: left shown, an empty
    box still took the column's gap, and eight of them stood between the title and the step."""
    hidden = [f".st-key-{step_key(other)}" for other in STEP_TITLES if other != step]
    boxes = [f'[data-testid="stLayoutWrapper"]:has(> {container})' for container in hidden]
    return f"<style>{', '.join(hidden + boxes)} {{display: none}}</style>"


@st.fragment(key=NAVIGATION)
def navigation() -> None:
    """The step selector, Previous and Next, the step's title and the CSS that shows the step alone. The steps
    wrap onto a second row where one row is too narrow: cut off, the last step could not be reached."""
    step = controls.bound_widget(st.segmented_control, "step", "Step", options=list(STEP_TITLES),
                                 format_func=STEP_LABELS.get, label_visibility="collapsed", wrap=True)
    _step_buttons(step, "", controls.request)
    st.subheader(f"Step {step} of {LESSON_STEPS}: {STEP_TITLES[step]}")
    st.html(shown_alone(step))
    classroom.sync(controls.current_state())


@st.fragment
def foot(step: int) -> None:
    """Previous and Next under step's explanation, screens below the buttons at the top."""
    _step_buttons(step, f"_foot_{step}", _from_foot)


def _from_foot(**values) -> None:
    """A move at a foot: the top must show it (its own place alone would rerun otherwise)."""
    controls.request(**values)
    st.rerun(NAVIGATION)


def _step_buttons(step: int, suffix: str, move) -> None:
    """Previous and Next, in a row; suffix tells the keys of the rows apart (the top's and each step's foot)."""
    bar = st.container(horizontal=True, vertical_alignment="center")
    bar.button("Previous", key=f"lesson_prev{suffix}", icon=":material/arrow_back:", disabled=step == 1,
               on_click=move, kwargs={"step": step - 1})
    bar.button("Next", key=f"lesson_next{suffix}", icon=":material/arrow_forward:", disabled=step == LESSON_STEPS,
               on_click=move, kwargs={"step": step + 1})
