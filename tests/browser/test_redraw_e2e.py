"""A chart whose spec changes while the reader's moves stand (presentation mode on: larger letters) is drawn anew
by the browser, from where its spec says its inputs start: that must be where the reader left them, the head the
heading names, not the head the chart was first drawn at."""

from __future__ import annotations

from harness.browser import expect_head, load_page, press_chart_key, wait_until_settled
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS


def test_a_chart_drawn_anew_in_presentation_mode_keeps_the_head_the_reader_moved_to(page, base_url):
    load_page(page, f"{base_url}/?text=time+flies+like+an+arrow")
    for _ in range(3):
        press_chart_key(page, "head")
    expect_head(page, 3)
    page.get_by_text("Presentation mode").click()
    wait_until_settled(page, quiet_ms=1_000)
    expect_head(page, 3)
