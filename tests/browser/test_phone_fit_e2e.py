"""On a phone (390 × 844), the page's number tables fit the screen's width: the counting lab's six columns used to
run past the right edge, its last one hidden with nothing to say it was there."""

from __future__ import annotations

from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 390, "height": 844}


def test_the_counting_labs_table_fits_a_phone(page, base_url):
    page.goto(f"{base_url}/?view=counting")
    table = page.locator('[data-testid="count-table"]')
    table.wait_for(state="attached", timeout=120_000)
    box = table.evaluate("t => ({right: t.getBoundingClientRect().right, scroll: t.scrollWidth, shown: t.clientWidth,"
                         " screen: innerWidth, columns: t.querySelectorAll('th').length})")
    assert box["columns"] == 6
    assert box["scroll"] <= box["shown"] and box["right"] <= box["screen"], box
