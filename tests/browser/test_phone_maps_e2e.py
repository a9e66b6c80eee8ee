"""On a phone (390 × 844), the induction lab's maps keep off the screen's right edge by as much as the page's own
margin, as its other charts do: the fourth map of a row used to touch the edge."""

from __future__ import annotations

from harness.browser import load_page, wait_until_settled
from tests.browser.test_induction_e2e import train_button
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 390, "height": 844}
# Four heads a layer, the lab's default: four maps to a row. Small otherwise, a few seconds to train.
QUERY = "?view=induction&steps=100&heads=4&vocab=8&periods=2-6&seed=23"


def test_the_induction_maps_keep_the_pages_margin_on_a_phone(page, base_url):
    from playwright.sync_api import expect

    load_page(page, base_url + "/" + QUERY, drawn=train_button)
    if train_button(page).is_enabled():
        train_button(page).click()
    expect(page.get_by_text("Trained 100 steps in").first).to_be_visible(timeout=180_000)
    maps = page.locator('[data-testid="stVegaLiteChart"][aria-label^="Every head\'s attention"]').first
    maps.locator("canvas, svg").first.wait_for()
    wait_until_settled(page)
    box = page.evaluate("""() => {
        const main = document.querySelector('[data-testid="stMainBlockContainer"]');
        const maps = document.querySelector('[data-testid="stVegaLiteChart"][aria-label^="Every head\\'s attention"]');
        const plot = maps.querySelector('canvas, svg').getBoundingClientRect();
        const padding = parseFloat(getComputedStyle(main).paddingRight);
        return {right: plot.right, screen: innerWidth, padding};
    }""")
    assert box["right"] <= box["screen"] - box["padding"], box
