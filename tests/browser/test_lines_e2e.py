"""The one-head view in Chromium: a head reached by scrubbing is the head a link opens, and the lines.

Pixels are read off the canvas (toDataURL), so "the same picture" is exact, and "another picture"
means the browser drew something else.
"""

from __future__ import annotations

import re

from harness.browser import act_and_measure, chart_input, chart_pixels, load_page, open_tab, press_chart_key
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

QUERY = "?text=the+quick+brown+fox+jumps+over+the+lazy+dog"  # 11 tokens with [CLS] and [SEP]
LINES = ".st-key-chart-lines"


def lines_pixels(page) -> str:
    return page.locator(f"{LINES} canvas").evaluate("canvas => canvas.toDataURL()")


def open_lines(page, base_url: str, query: str) -> None:
    load_page(page, f"{base_url}/{query}")
    act_and_measure(page, page.locator(".st-key-head_stage button").filter(has_text="Lines").click)
    page.locator(f"{LINES} canvas").wait_for()


def test_a_head_reached_in_the_browser_is_drawn_as_a_link_to_it_draws_it(browser, page, base_url):
    load_page(page, f"{base_url}/{QUERY}&layer=1")
    for _ in range(3):
        press_chart_key(page, "head", "ArrowRight")
    press_chart_key(page, "layer", "ArrowRight")
    scrubbed = chart_pixels(page)
    linked = open_tab(browser)
    try:
        load_page(linked, f"{base_url}/{QUERY}&layer=2&head=3")
        assert chart_pixels(linked) == scrubbed, "layer 2, head 3: the filter in the browser picks the wrong head"
    finally:
        linked.context.close()


def test_the_lines_follow_the_head_and_pointing_at_a_token_keeps_its_lines(page, base_url):
    from playwright.sync_api import expect

    open_lines(page, base_url, f"{QUERY}&layer=2&head=3")
    expect(chart_input(page, "head")).to_have_value("3")
    before = lines_pixels(page)
    press_chart_key(page, "head", "ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]head=4(&|$)"))
    assert lines_pixels(page) != before, "another head, other lines"

    drawn = lines_pixels(page)
    canvas = page.locator(f"{LINES} canvas").bounding_box()
    pointed = None
    for dy in range(10, int(canvas["height"]), 4):  # down the column of query tokens, on the left
        page.mouse.move(canvas["x"] + 22, canvas["y"] + dy)
        page.wait_for_timeout(60)
        if lines_pixels(page) != drawn:
            pointed = lines_pixels(page)
            break
    assert pointed is not None, "pointing at a query token changed nothing"
    page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] + 40)  # off the chart
    page.wait_for_timeout(300)
    assert lines_pixels(page) == drawn, "every line comes back once the pointer leaves the token"
