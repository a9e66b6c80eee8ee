"""The switch view's pills in a real Chromium: a head switched off reads as off (grey and struck through), where
Streamlit's selected pill, pale blue, looked like the head that was on."""

from __future__ import annotations

import pytest

from harness.browser import act_and_measure, wait_until_settled
from tests.browser.frames import answer, frames_after
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

_LOOK = """button => ({background: getComputedStyle(button).backgroundColor,
  struck: getComputedStyle(button.querySelector('p')).textDecorationLine})"""


def test_a_head_switched_off_is_grey_and_struck_through_and_the_others_are_not(page, base_url):
    page.goto(f"{base_url}/?view=switch")
    pills = page.locator(".st-key-switch_off_1 button")
    pills.first.wait_for()
    wait_until_settled(page)
    act_and_measure(page, pills.nth(3).click)
    off, on = pills.nth(3).evaluate(_LOOK), pills.nth(4).evaluate(_LOOK)
    assert pills.nth(3).get_attribute("aria-pressed") == "true"
    assert off["struck"] == "line-through" and on["struck"] == "none"
    red, green, blue = (int(part) for part in off["background"].strip("rgba()").split(",")[:3])
    assert max(red, green, blue) - min(red, green, blue) <= 12, f"grey, not a tint of blue: {off['background']}"


@pytest.mark.own_tab  # its websocket is watched or held
def test_a_head_switched_off_reruns_the_toggles_and_the_numbers_not_the_ranking(page, base_url):
    frames = frames_after(page)
    page.goto(f"{base_url}/?view=switch")
    pills = page.locator(".st-key-switch_off_1 button")
    pills.first.wait_for()
    wait_until_settled(page)
    opened = b"".join(frame for frame in frames if frame)
    ranking = b"Which heads move sentence A"
    assert ranking in opened and b"cos(A, B), all heads on" in opened
    frames.clear()
    act_and_measure(page, pills.nth(3).click)
    moved = answer(frames)
    assert b"cos(A, B), 1 head off" in moved, "the numbers follow the toggle"
    assert ranking not in moved and "A moved (1 − cos), one head off".encode() not in moved, \
        "the ranking, which no toggle changes, was sent again"
