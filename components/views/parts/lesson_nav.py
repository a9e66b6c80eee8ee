"""The guided lesson's navigation: at the top, the step selector, Previous and Next; at the foot of each step, its
own Previous and Next; and the small script that shows the current step alone.

The current step and the steps before and after it are drawn, each in a container of its own with its title
(components/views/lesson.py); the browser shows one. Which one is an attribute of the page's body,
data-lesson-step, that the script sets: to the server's step whenever the navigation is drawn, and at once when
the reader presses Previous, Next or a drawn step, before the server has heard of it. So a step change shows in
the frame of the key press; the lesson's run that follows writes the link and the class's view and draws the step
and its neighbours again, the new one among them (hidden, after the step shown). A jump to a step not drawn waits
for that run. Only three steps are drawn, not all of them, because a control beside
the lesson (layer, head, scaling) draws again whatever is drawn: nine steps took 1.5 s a head move, against 0.4 s
for one.

How many steps there are depends on the model (components/page/lesson_steps.py: a Llama's lesson has its rotary
and shared-heads steps), so every function here is given the lesson's step names, or their count.
"""

from __future__ import annotations

import streamlit as st

from components.assets import filled, read_beside
from components.page import controls
from components.page.lesson_steps import STEP_ATTRIBUTE, STEP_LABELS, STEP_TITLES

STEP_DATASET = "lessonStep"  # the same attribute as JavaScript's dataset names it
RUNS = "lesson_runs"  # session state: how many times the navigation was drawn
STEP_KEY = "lesson_step_"  # + the step: its container's key, and the CSS class (st-key-…) the browser hides it by


def step_key(step: int) -> str:
    return f"{STEP_KEY}{step}"


def drawn_steps(step: int, count: int) -> list[int]:
    """The steps drawn with step, of a lesson of count steps, in the order they are drawn: it, then the neighbours
    that Next and Previous show at once."""
    return [near for near in (step, step + 1, step - 1) if 1 <= near <= count]


def _hidden_unless(condition: str, step: int) -> list[str]:
    """Selectors, under condition (a selector of the body), of every step's container but step's, and of the box
    Streamlit wraps each: left shown, an empty box still took the column's gap, and eight of them stood between the
    navigation and the step."""
    others = f'[class*="st-key-{STEP_KEY}"]:not(.st-key-{step_key(step)})'
    return [f"{condition} {others}", f'{condition} [data-testid="stLayoutWrapper"]:has(> {others})']


def shown_alone(step: int, count: int) -> str:
    """CSS that shows one step's container alone, of a lesson of count steps: the one the body's data-lesson-step
    names (the script sets it), and before the script has run, step."""
    hidden = [selector for shown in range(1, count + 1)
              for selector in _hidden_unless(f'body[data-{STEP_ATTRIBUTE}="{shown}"]', shown)]
    hidden += _hidden_unless(f"body:not([data-{STEP_ATTRIBUTE}])", step)
    return f"<style>{', '.join(hidden)} {{display: none}}</style>"


# The script that switches the step shown: lesson_nav.js, beside this module.
_switch = st.components.v2.component(
    "attention_anatomy.lesson_steps", isolate_styles=False,
    js=filled(read_beside(__file__, "lesson_nav.js"), step_dataset=STEP_DATASET))


def navigation(lesson: tuple[str, ...], loading: bool = False) -> int:
    """The step selector, Previous and Next, the CSS that shows the step alone and the script that switches it, for
    the lesson of these step names; returns the step. The steps wrap onto a second row where one row is too narrow:
    cut off, the last step could not be reached. loading: the model asked for is still loading, and the bundled
    one's lesson is shown meanwhile."""
    count = len(lesson)
    asked = controls.current_state().step
    if loading and asked > count:  # a link to a Llama's step 12: kept for the Llama, its lesson's last step meanwhile
        st.info(f"step={asked} is a step of the lesson on the model that is loading; this model's lesson has {count} "
                f"steps, and its last is shown until that model has loaded.", icon=":material/info:")
        st.html(shown_alone(count, count))
        return count
    _fit_step(count)
    step = controls.bound_widget(st.segmented_control, "step", "Step", options=list(range(1, count + 1)),
                                 format_func=lambda number: f"{number} {STEP_LABELS[lesson[number - 1]]}",
                                 label_visibility="collapsed", wrap=True)
    _step_buttons(step, "", count)
    st.html(shown_alone(step, count))
    # A number new every run: the script runs again and shows the server's step even when that did not change (a
    # press the server overruled; it had shown the step pressed).
    runs = st.session_state[RUNS] = st.session_state.get(RUNS, 0) + 1
    _switch(key="lesson_steps", data={"step": step, "drawn": drawn_steps(step, count), "run": runs}, height=0)
    return step


def _fit_step(count: int) -> None:
    """A step past this model's lesson (a link's step=13 on a BERT, whose lesson has 11; or a Llama's last step
    left for a BERT) becomes its last step, saying so; the notice stays while the step does (controls.held)."""
    asked = controls.current_state().step
    notices = []
    if asked > count:
        notices.append(f"step={asked} does not exist (this model's lesson has {count} steps: 1 to {count}); "
                       f"showing step={count}.")
        controls.request(step=count)
    for notice in controls.held("lesson step", notices, {"step": count}):
        st.warning(notice, icon=":material/info:")


def title(step: int, lesson: tuple[str, ...]) -> None:
    """The step's title, at the top of its container: it is shown and hidden with the step."""
    st.subheader(f"Step {step} of {len(lesson)}: {STEP_TITLES[lesson[step - 1]]}")


def foot(step: int, count: int) -> None:
    """Previous and Next under step's explanation, screens below the buttons at the top."""
    _step_buttons(step, f"_foot_{step}", count)


def _step_buttons(step: int, suffix: str, count: int) -> None:
    """Previous and Next, in a row; suffix tells the keys of the rows apart (the top's and each step's foot)."""
    bar = st.container(horizontal=True, vertical_alignment="center")
    bar.button("Previous", key=f"lesson_prev{suffix}", icon=":material/arrow_back:", disabled=step == 1,
               on_click=controls.request, kwargs={"step": step - 1})
    bar.button("Next", key=f"lesson_next{suffix}", icon=":material/arrow_forward:", disabled=step == count,
               on_click=controls.request, kwargs={"step": step + 1})
