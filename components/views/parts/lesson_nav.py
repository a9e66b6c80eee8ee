"""The guided lesson's navigation: at the top, the step selector, Previous and Next; at the foot of each step, its
own Previous and Next; and the small script that shows the current step alone.

The current step and the steps before and after it are drawn, each in a container of its own with its title
(components/views/lesson.py); the browser shows one. Which one is an attribute of the page's body,
data-lesson-step, that the script sets: to the server's step whenever the navigation is drawn, and at once when
the reader presses Previous, Next or a drawn step, before the server has heard of it. So a step change shows in
the frame of the key press; the lesson's run that follows writes the link and the class's view and draws the step
and its neighbours again, the new one among them (hidden, after the step shown). A jump to a step not drawn waits
for that run. Only three steps are drawn, not all nine, because a control beside
the lesson (layer, head, scaling) draws again whatever is drawn: nine steps took 1.5 s a head move, against 0.4 s
for one.
"""

from __future__ import annotations

import streamlit as st

from components.assets import filled, read_beside
from components.page import controls
from components.page.lesson_steps import STEP_ATTRIBUTE, STEP_LABELS, STEP_TITLES
from components.page.page_state import LESSON_STEPS

STEP_DATASET = "lessonStep"  # the same attribute as JavaScript's dataset names it
RUNS = "lesson_runs"  # session state: how many times the navigation was drawn
STEP_KEY = "lesson_step_"  # + the step: its container's key, and the CSS class (st-key-…) the browser hides it by


def step_key(step: int) -> str:
    return f"{STEP_KEY}{step}"


def drawn_steps(step: int) -> list[int]:
    """The steps drawn with step, in the order they are drawn: it, then the neighbours that Next and Previous show
    at once."""
    return [near for near in (step, step + 1, step - 1) if near in STEP_TITLES]


def _hidden_unless(condition: str, step: int) -> list[str]:
    """Selectors, under condition (a selector of the body), of every step's container but step's, and of the box
    Streamlit wraps each: left shown, an empty box still took the column's gap, and eight of them stood between the
    navigation and the step."""
    others = f'[class*="st-key-{STEP_KEY}"]:not(.st-key-{step_key(step)})'
    return [f"{condition} {others}", f'{condition} [data-testid="stLayoutWrapper"]:has(> {others})']


def shown_alone(step: int) -> str:
    """CSS that shows one step's container alone: the one the body's data-lesson-step names (the script sets it),
    and before the script has run, step."""
    hidden = [selector for shown in STEP_TITLES
              for selector in _hidden_unless(f'body[data-{STEP_ATTRIBUTE}="{shown}"]', shown)]
    hidden += _hidden_unless(f"body:not([data-{STEP_ATTRIBUTE}])", step)
    return f"<style>{', '.join(hidden)} {{display: none}}</style>"


# The script that switches the step shown: lesson_nav.js, beside this module.
_switch = st.components.v2.component(
    "attention_anatomy.lesson_steps", isolate_styles=False,
    js=filled(read_beside(__file__, "lesson_nav.js"), step_dataset=STEP_DATASET))


def navigation() -> int:
    """The step selector, Previous and Next, the CSS that shows the step alone and the script that switches it;
    returns the step. The steps wrap onto a second row where one row is too narrow: cut off, the last step could
    not be reached."""
    step = controls.bound_widget(st.segmented_control, "step", "Step", options=list(STEP_TITLES),
                                 format_func=STEP_LABELS.get, label_visibility="collapsed", wrap=True)
    _step_buttons(step, "")
    st.html(shown_alone(step))
    # A number new every run: the script runs again and shows the server's step even when that did not change (a
    # press the server overruled; it had shown the step pressed).
    runs = st.session_state[RUNS] = st.session_state.get(RUNS, 0) + 1
    _switch(key="lesson_steps", data={"step": step, "drawn": drawn_steps(step), "run": runs}, height=0)
    return step


def title(step: int) -> None:
    """The step's title, at the top of its container: it is shown and hidden with the step."""
    st.subheader(f"Step {step} of {LESSON_STEPS}: {STEP_TITLES[step]}")


def foot(step: int) -> None:
    """Previous and Next under step's explanation, screens below the buttons at the top."""
    _step_buttons(step, f"_foot_{step}")


def _step_buttons(step: int, suffix: str) -> None:
    """Previous and Next, in a row; suffix tells the keys of the rows apart (the top's and each step's foot)."""
    bar = st.container(horizontal=True, vertical_alignment="center")
    bar.button("Previous", key=f"lesson_prev{suffix}", icon=":material/arrow_back:", disabled=step == 1,
               on_click=controls.request, kwargs={"step": step - 1})
    bar.button("Next", key=f"lesson_next{suffix}", icon=":material/arrow_forward:", disabled=step == LESSON_STEPS,
               on_click=controls.request, kwargs={"step": step + 1})
