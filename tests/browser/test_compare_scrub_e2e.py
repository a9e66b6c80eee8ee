"""The compare view in a real Chromium: one pair of layer and head inputs moves both texts and their difference.

Every head of both short texts is in the browser (components/charts/scrub.py), so a key press on the chart's
own head input repaints the three panels before the server has answered; the rerun that follows brings
the URL and the largest change up to it. The panels' pixels are read from the chart's canvas.
"""

from __future__ import annotations

import re

from harness.browser import HeldReplies, load_page, press_chart_key, wait_for_change, wait_until_settled
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

QUERY = "?view=compare&text=time+flies+like+an+arrow&text_b=fruit+flies+like+a+banana"
PICTURE_JS = "chart => chart.querySelector('canvas').toDataURL()"


def compare_chart(page):
    """The one chart with inputs of its own: text A, text B and A − B as its panels."""
    return page.locator('[data-testid="stVegaLiteChart"]:has(.vega-bindings)').first


def pixels(page) -> str:
    compare_chart(page).locator("canvas").wait_for()
    return compare_chart(page).evaluate(PICTURE_JS)


def open_compare(page, base_url: str, query: str = QUERY) -> None:
    load_page(page, f"{base_url}/{query}", drawn=lambda p: compare_chart(p).locator("canvas"))


def expect_page_at(page, layer: int, head: int) -> None:
    from playwright.sync_api import expect

    expect(page).to_have_url(re.compile(rf"[?&]head={head}(&|$)" if head else r"^(?!.*[?&]head=)"))
    expect(page.get_by_role("heading", name=f"Where they differ: layer {layer}, head {head}", exact=True)
           ).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_head_key_repaints_both_texts_before_the_server_answers(page, base_url):
    from playwright.sync_api import expect

    replies = HeldReplies.on(page)
    open_compare(page, base_url)
    before = pixels(page)

    head = replies.press(page, "head")
    assert wait_for_change(lambda: pixels(page), before)[0] != before, "the panels waited for the server"
    assert replies.wait_until_held(page), "the move asked the server for no rerun"
    expect_page_at(page, 0, 0)  # the rest of the page has not heard of the move yet

    replies.release()
    wait_until_settled(page)
    expect_page_at(page, 0, 1)
    expect(head).to_have_value("1")


def test_heads_reached_by_key_look_as_the_links_to_them(browser, page, base_url):
    """Three heads pressed through on one page, each against a fresh page opened on its link."""
    from harness.browser import open_tab

    open_compare(page, base_url)
    for head in range(1, 4):
        press_chart_key(page, "head", "ArrowRight")
        expect_page_at(page, 0, head)
        linked = open_tab(browser)
        try:
            open_compare(linked, base_url, f"{QUERY}&head={head}")
            assert pixels(linked) == pixels(page), f"head {head} by key differs from its link"
        finally:
            linked.context.close()
