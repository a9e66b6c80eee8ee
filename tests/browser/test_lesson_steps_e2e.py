"""The guided lesson's steps in a real Chromium: a step change reruns the lesson alone, not the attention controls
beside it nor the shapes panel (streamlit_app.view_alone), and the link follows the step."""

from __future__ import annotations

import pytest

from harness.browser import act_and_measure
from tests.browser.frames import answer, frames_after, wait_until_measured
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS


@pytest.mark.own_tab  # its websocket is watched or held
def test_a_step_change_sends_the_new_step_and_not_the_controls_beside_it(page, base_url):
    frames = frames_after(page)
    page.goto(f"{base_url}/?view=lesson&step=2")
    page.locator(".st-key-lesson_next button").wait_for()
    wait_until_measured(page, frames)
    beside = [b"Projection source", b"Scaling: scores divided by"]  # labels of the attention controls
    opened = b"".join(frame for frame in frames if frame)
    assert all(label in opened for label in beside) and b"Step 2 of 9" in opened
    frames.clear()
    act_and_measure(page, page.locator(".st-key-lesson_next button").click)
    moved = answer(frames)
    assert b"Step 3 of 9" in moved
    assert not [label for label in beside if label in moved], "the attention controls were drawn again"
    assert "step=3" in page.url
    assert page.get_by_text("Step 3 of 9: Query, key and value projections").is_visible()


@pytest.mark.own_tab  # its websocket is watched or held
def test_a_control_beside_the_lesson_still_redraws_its_step(page, base_url):
    frames = frames_after(page)
    page.goto(f"{base_url}/?view=lesson&step=6")
    head = page.locator(".st-key-head [data-testid='stSlider'] input[type='range']")
    head.wait_for()
    wait_until_measured(page, frames)
    frames.clear()
    head.focus()
    act_and_measure(page, lambda: head.press("ArrowRight"))
    assert b"Weights, layer 0, head 1" in answer(frames)  # the step's chart, for the new head
    assert "head=1" in page.url and "step=6" in page.url
