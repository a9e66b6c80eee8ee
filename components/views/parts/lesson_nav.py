"""The guided lesson's navigation: at the top, the step selector, Previous and Next; at the foot of each step, its
own Previous and Next; and the small script that shows the current step alone.

The current step is drawn at every run, in a container of its own with its title (components/views/lesson.py);
the steps before and after it are drawn in theirs by a run of their own, which the page's script asks for once
nothing on the page has moved for FILL_AFTER_MS (the reader is reading); the browser shows one step. Which one is an
attribute of the page's body, data-lesson-step, that the script sets: to the server's step whenever the navigation
is drawn, and at once when the reader presses Previous, Next or a drawn step, before the server has heard of it. So
a step change shows in the frame of the key press; the lesson's run that follows writes the link and the class's
view and draws the new step alone, and its neighbours follow when the page is still again. A press within
FILL_AFTER_MS of the last run, or a jump to a step not drawn, waits for that run.

Only the neighbours are drawn, not all the steps, and not at every run, because a control beside the lesson (layer,
head, scaling) draws again whatever is drawn: nine steps took 1.5 s a head move, against 0.4 s for one; and with the
neighbours drawn at every run, each such press drew three steps' charts where the reader sees one step's, which
took about twice as long to settle as the step alone (docs/benchmarks.md).

How many steps there are depends on the model (components/page/lesson_steps.py: a Llama's lesson has its rotary
and shared-heads steps), so every function here is given the lesson's step names, or their count.
"""

from __future__ import annotations

import streamlit as st

from components.assets import filled, read_beside
from components.page import controls
from components.page.lesson_steps import STEP_ATTRIBUTE, STEP_LABELS, STEP_TITLES

STEP_DATASET = "lessonStep"  # the same attribute as JavaScript's dataset names it
DRAWN_DATASET = "lessonDrawn"  # DRAWN_ATTRIBUTE, as JavaScript's dataset names it
RUNS = "lesson_runs"  # session state: how many times the navigation was drawn
SWITCH_KEY = "lesson_steps"  # the script's key: its trigger's value is read under it (_fill_asked)
_FILL_ASKED = "_lesson_fill_asked"  # session state: the run whose neighbours the script asked for
# How long nothing on the page must move before the script asks for the neighbours' run: longer than the pause
# between a reader's presses of a control (about 200 to 400 ms), so that a burst of presses draws one step each.
FILL_AFTER_MS = 500
STEP_KEY = "lesson_step_"  # + the step: its container's key, and the CSS class (st-key-…) the browser hides it by


def step_key(step: int) -> str:
    return f"{STEP_KEY}{step}"


def drawn_steps(step: int, count: int) -> list[int]:
    """The steps drawn with step, of a lesson of count steps, once its neighbours' run has come, in the order they
    are drawn: it, then the neighbours that Next and Previous show at once."""
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
    js=filled(read_beside(__file__, "lesson_nav.js"), step_dataset=STEP_DATASET, drawn_dataset=DRAWN_DATASET,
             fill_after_ms=FILL_AFTER_MS))


def navigation(lesson: tuple[str, ...], loading: bool = False) -> tuple[int, list[int]]:
    """The step selector, Previous and Next, the CSS that shows the step alone and the script that switches it, for
    the lesson of these step names; returns the step and the steps this run draws (drawn_steps, in their order): the
    step alone, or with its neighbours in the run the script asked for. The steps wrap onto a second row where one
    row is too narrow: cut off, the last step could not be reached. loading: the model asked for is still loading,
    and the bundled one's lesson is shown meanwhile."""
    count = len(lesson)
    asked = controls.current_state().step
    if loading and asked > count:  # a link to a Llama's step 12: kept for the Llama, its lesson's last step meanwhile
        st.info(f"step={asked} is a step of the lesson on the model that is loading; this model's lesson has {count} "
                f"steps, and its last is shown until that model has loaded.", icon=":material/info:")
        st.html(shown_alone(count, count))
        return count, [count]
    _fit_step(count)
    step = controls.bound_widget(st.segmented_control, "step", "Step", options=list(range(1, count + 1)),
                                 format_func=lambda number: f"{number} {STEP_LABELS[lesson[number - 1]]}",
                                 label_visibility="collapsed", wrap=True)
    _step_buttons(step, "", count)
    st.html(shown_alone(step, count))
    # A number new every run: the script runs again and shows the server's step even when that did not change (a
    # press the server overruled; it had shown the step pressed). The neighbours are drawn in the run the script
    # asked for the run it was drawn in: not when another run came between (a press, which draws its step alone).
    last = st.session_state.get(RUNS, 0)
    filling = st.session_state.pop(_FILL_ASKED, None) == last
    runs = st.session_state[RUNS] = last + 1
    near = drawn_steps(step, count)
    drawn = near if filling else [step]
    _switch(key=SWITCH_KEY, data={"step": step, "drawn": drawn, "run": runs, "fill": drawn != near},
            on_fill_change=_fill_asked, height=0)
    return step, drawn


def _fill_asked() -> None:
    """The script's callback: it asks for the neighbours of the run it was drawn in (its number). The ask carries
    the widgets' values as the browser holds them and no move of the reader's, which would have run at once: the
    server's values stand (controls.keep_the_servers_values)."""
    st.session_state[_FILL_ASKED] = (st.session_state.get(SWITCH_KEY) or {}).get("fill")
    controls.keep_the_servers_values()


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
