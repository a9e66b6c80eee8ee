"""The guided lesson's navigation: at the top, the step selector, Previous and Next; at the foot of each step, its
own Previous and Next; and the small script that shows the current step alone.

Every step is drawn once, each in a container of its own with its title (components/views/lesson.py); the browser
hides all but one. Which one is an attribute of the page's body, data-lesson-step, that the script sets: to the
server's step whenever the navigation is drawn, and at once when the reader presses Previous, Next or a step,
before the server has heard of it. So the step changes in the frame of the key press; the server's run that
follows (the top alone: the selector, two buttons and the CSS, no chart) writes the link and the class's view
(classroom.sync) and sends nothing the reader sees change. A step's foot never changes (step 4's Next always leads
to 5), so a move at the top leaves every foot as it is; a move at a foot reruns the top by its key.
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
STEP_ATTRIBUTE = "lesson-step"  # the body's data-lesson-step: the step the browser shows
STEP_DATASET = "lessonStep"  # the same attribute as JavaScript's dataset names it
NAVIGATION = "lesson_navigation"  # the top's fragment key, by which a move at a foot reruns it
STEP_KEY = "lesson_step_"  # + the step: its container's key, and the CSS class (st-key-…) the browser hides it by


def step_key(step: int) -> str:
    return f"{STEP_KEY}{step}"


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


# The script: the body's data-lesson-step is the server's step (data.step) whenever the navigation is drawn, and the
# step a press asks for the moment it is pressed (a click, or Enter or Space on a focused button). The buttons are
# told apart by their containers' keys (st-key-lesson_prev, st-key-lesson_next_foot_4, st-key-step).
_JS = f"""
export default function ({{ data }}) {{
  const body = document.body;
  const last = {LESSON_STEPS};
  body.dataset.{STEP_DATASET} = String(data.step);
  const asked = event => {{
    const button = event.target.closest('button');
    if (!button) return null;
    const keyed = button.closest('[class*="st-key-lesson_prev"], [class*="st-key-lesson_next"], .st-key-step');
    if (!keyed || button.disabled) return null;
    const now = Number(body.dataset.{STEP_DATASET});
    if (keyed.matches('.st-key-step')) {{
      const pills = [...keyed.querySelectorAll('button')];
      return pills.indexOf(button) + 1;
    }}
    return keyed.matches('[class*="st-key-lesson_next"]') ? now + 1 : now - 1;
  }};
  const show = event => {{
    const step = asked(event);
    if (step >= 1 && step <= last) body.dataset.{STEP_DATASET} = String(step);
  }};
  document.addEventListener('click', show, true);
  return () => {{
    document.removeEventListener('click', show, true);
    delete body.dataset.{STEP_DATASET};  // gone with the lesson: a later lesson starts from its own step
  }};
}}
"""
_switch = st.components.v2.component("attention_anatomy.lesson_steps", js=_JS, isolate_styles=False)


@st.fragment(key=NAVIGATION)
def navigation() -> None:
    """The step selector, Previous and Next, the CSS that shows the step alone and the script that switches it. The
    steps wrap onto a second row where one row is too narrow: cut off, the last step could not be reached."""
    step = controls.bound_widget(st.segmented_control, "step", "Step", options=list(STEP_TITLES),
                                 format_func=STEP_LABELS.get, label_visibility="collapsed", wrap=True)
    _step_buttons(step, "", controls.request)
    st.html(shown_alone(step))
    _switch(key="lesson_steps", data={"step": step}, height=0)
    classroom.sync(controls.current_state())


def title(step: int) -> None:
    """The step's title, at the top of its container: it is shown and hidden with the step."""
    st.subheader(f"Step {step} of {LESSON_STEPS}: {STEP_TITLES[step]}")


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
