"""The page's own scripts (Streamlit components, no iframe) keep one set of listeners however often they run.

Streamlit runs such a script again whenever the server sends it new data, and calls only the last run's cleanup,
when the element goes. The window-size script (components/page/viewport.py) runs again at each new size, the
lesson's step script (components/views/parts/lesson_nav.py) at each run of the lesson: each must stop what its run
before set, or listeners pile up, and an old one acts on what it was told long ago."""

from __future__ import annotations

import pytest

from harness.browser import act_and_measure, load_page, wait_until_settled
from tests.browser.frames import frames_after
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS


def listeners(page, target: str, kind: str) -> int:
    """How many `kind` listeners the page's `target` (window, document) has, from Chromium's own debugger."""
    cdp = page.context.new_cdp_session(page)
    try:
        handle = cdp.send("Runtime.evaluate", {"expression": target})["result"]["objectId"]
        return sum(entry["type"] == kind for entry in cdp.send("DOMDebugger.getEventListeners",
                                                               {"objectId": handle})["listeners"])
    finally:
        cdp.detach()


def test_the_lesson_keeps_one_click_listener_however_many_steps_are_taken(page, base_url):
    load_page(page, f"{base_url}/?view=lesson", drawn=lambda page: page.locator(".st-key-lesson_next button"))
    at_first = listeners(page, "document", "click")
    for _ in range(4):
        act_and_measure(page, page.locator(".st-key-lesson_next button").click)
    assert listeners(page, "document", "click") == at_first


@pytest.mark.own_tab  # its websocket is watched, and its window resized
def test_each_new_window_size_is_reported_once_by_one_listener(page, base_url):
    frames = frames_after(page)
    load_page(page, f"{base_url}/?text=time+flies+like+an+arrow")
    at_first = listeners(page, "window", "resize")
    for width in (1280, 1100, 1366, 1280):
        frames.clear()
        page.set_viewport_size({"width": width, "height": 720})
        page.wait_for_timeout(400)  # the script reports a size 150 ms after the window stops changing
        wait_until_settled(page)
        assert sum(frame is None for frame in frames) == 1, f"one run asked for the size at {width} px"
    assert listeners(page, "window", "resize") == at_first
