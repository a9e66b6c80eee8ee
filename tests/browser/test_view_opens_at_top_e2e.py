"""A view opened from a click opens at its top: a small map clicked in the all-heads grid, scrolled down to it, opened
the one-head view scrolled as far down, its title and the chart's top cut off."""

from __future__ import annotations

from harness.browser import act_and_measure, wait_until_settled
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 1366, "height": 768}
# How far the page's main area is scrolled: it scrolls inside its own element, not the window.
SCROLLED_JS = """() => Math.max(...[...document.querySelectorAll('*')].filter(element =>
    element.scrollHeight > element.clientHeight && getComputedStyle(element).overflowY !== 'visible'
    && element.contains(document.querySelector('[data-testid="stMainBlockContainer"]')))
    .map(element => element.scrollTop), window.scrollY)"""


def test_a_head_clicked_in_the_grid_opens_its_view_at_the_top(page, base_url):
    from playwright.sync_api import expect

    page.goto(f"{base_url}/?view=heads&layer=2")
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    charts.first.locator("svg").first.wait_for()
    wait_until_settled(page)
    head = charts.first.locator('image:not([width="0"])').nth(9)  # the third row of maps, below the first screen
    head.scroll_into_view_if_needed()
    assert page.evaluate(SCROLLED_JS) > 100, "the grid's third row is scrolled to"
    box = head.bounding_box()
    act_and_measure(page, lambda: page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2))
    title = page.get_by_role("heading", name="One head", exact=True)
    expect(title).to_be_visible()
    wait_until_settled(page)
    assert page.evaluate(SCROLLED_JS) == 0
    assert title.bounding_box()["y"] >= 0, "the view's title in sight"
