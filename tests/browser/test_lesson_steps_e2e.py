"""The guided lesson's steps in a real Chromium: the step is sent, and its neighbours once the page is still; the
browser shows one, switching at the press before the server hears of it; the rerun that follows is the lesson's
navigation and step alone, not the attention controls beside it nor the shapes panel, and the link follows the step,
from the top's buttons, a step's foot and the step selector."""

from __future__ import annotations

import re

import pytest

from harness.browser import act_and_measure, wait_for_lesson_steps
from tests.browser.frames import HeldMessages, answer, opened_watched
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
STEP_3_TITLES = [f"{letter}, layer 0, head 0".encode() for letter in "QKV"]  # the charts of step 3


@pytest.mark.own_tab  # its websocket is watched or held
def test_a_step_change_sends_the_new_step_and_not_the_controls_beside_it(page, base_url):
    from playwright.sync_api import expect

    frames = opened_watched(page, f"{base_url}/?view=lesson&step=2", ".st-key-lesson_next button")
    wait_for_lesson_steps(page, 1, 3)
    beside = [b"Projection source", b"Scaling: scores divided by"]  # labels of the attention controls
    opened = b"".join(frame for frame in frames if frame)
    assert all(label in opened for label in beside) and b"Step 2 of 11" in opened
    assert STEP_3_TITLES[0] in opened, "step 3 was drawn beside step 2 once the page was still"
    frames.clear()
    act_and_measure(page, page.locator(".st-key-lesson_next button").click)
    moved = answer(frames)
    assert b"step=3" in moved and b"Step 3 of 11" in moved, "the link follows"
    assert b"Mask: 1 = may look" not in moved, "step 4 waits for the page to be still"
    assert not [label for label in beside if label in moved], "the attention controls were drawn again"
    wait_for_lesson_steps(page, 4)
    assert b"Mask: 1 = may look" in b"".join(frame for frame in frames if frame), "step 4, once the page was still"
    assert "step=3" in page.url
    assert page.get_by_text("Step 3 of 11: Query, key and value projections").is_visible()
    assert steps_visible(page) == [3]
    act_and_measure(page, page.locator(".st-key-lesson_prev_foot_3 button").click)
    # The browser shows step 2 at the press; on a loaded machine its message can leave later than the wait for a
    # rerun allows (harness.browser.NO_RERUN_GRACE_MS), so the link is polled for, not read once.
    expect(page).to_have_url(re.compile(r"[?&]step=2(&|$)"))
    assert steps_visible(page) == [2]
    assert page.get_by_text("Step 2 of 11: Simplified self-attention").is_visible()
    assert page.locator(".st-key-lesson_step_2 canvas").first.is_visible()


@pytest.mark.own_tab  # its websocket is held
def test_the_step_changes_at_the_press_before_the_server_answers(page, base_url):
    from playwright.sync_api import expect

    messages = HeldMessages(page)
    opened_watched(page, f"{base_url}/?view=lesson&step=2", ".st-key-lesson_next button")
    # The switching script mounts after the buttons show; a press before it waits for the server like any other, as
    # a press before the neighbours are drawn.
    page.locator('body[data-lesson-step="2"]').wait_for(state="attached")
    wait_for_lesson_steps(page, 1, 3)
    assert steps_visible(page) == [2]
    messages.holding = True
    page.locator(".st-key-lesson_next button").focus()
    page.keyboard.press("Enter")
    messages.wait_for_held(page)
    # Shown while the press is still held from the server (polled: on a loaded machine the browser draws late).
    expect(page.locator(".st-key-lesson_step_3")).to_be_visible()
    assert steps_visible(page) == [3] and messages.held, "shown while the press is still held from the server"
    assert page.get_by_text("Step 3 of 11: Query, key and value projections").is_visible()
    page.locator(".st-key-lesson_prev_foot_3 button").click()
    assert steps_visible(page) == [2]
    page.locator(".st-key-step button").nth(0).click()  # the selector's step 1, drawn beside 2
    assert steps_visible(page) == [1]
    page.locator(".st-key-step button").nth(6).click()  # step 7 is not drawn: it waits for the server
    assert steps_visible(page) == [1]
    assert "step=2" in page.url, "the server has heard of none of it yet"
    messages.release()
    act_and_measure(page, lambda: None)
    [server_step] = re.findall(r"step=(\d+)", page.url) or ["1"]
    assert steps_visible(page) == [int(server_step)], "once the server answers, its step is the one shown"


def steps_visible(page) -> list[int]:
    """The steps whose containers the browser shows (all eleven of the bundled BERT's lesson are on the page)."""
    return [step for step in range(1, 12) if page.locator(f".st-key-lesson_step_{step}").is_visible()]


@pytest.mark.own_tab  # its websocket is watched or held
def test_a_control_beside_the_lesson_still_redraws_its_step(page, base_url):
    slider = ".st-key-head [data-testid='stSlider'] input[type='range']"
    frames = opened_watched(page, f"{base_url}/?view=lesson&step=6", slider)
    wait_for_lesson_steps(page, 5, 7)  # the neighbours' run, which a press would otherwise cross
    head = page.locator(slider)
    frames.clear()
    head.focus()
    act_and_measure(page, lambda: head.press("ArrowRight"))
    assert b"Weights, layer 0, head 1" in answer(frames)  # the step's chart, for the new head
    assert "head=1" in page.url and "step=6" in page.url
