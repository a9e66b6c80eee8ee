"""The one-head chart's text alternative in Chromium: in the page's accessibility tree (a screen reader reads it),
drawn nowhere (a box of 1 px, clipped, out of the column's flow: the chart stands where it stood without it), and
following a move of the chart's own Head input by the keyboard."""

from __future__ import annotations

from harness.browser import expect_head, load_page, press_chart_key, weights_chart
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

QUERY = "?text=time+flies+like+an+arrow&layer=2&head=5"


def test_the_text_alternative_is_read_not_drawn_and_follows_the_head(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/{QUERY}")
    said = page.locator(".aa-chart-text")
    expect(said).to_have_count(1)
    expect(said).to_contain_text("Attention weights, layer 2, head 5: 7 query rows × 7 columns. Largest: ")
    assert said.get_attribute("aria-live") == "polite"
    box = said.evaluate("p => { const box = p.closest('[data-testid=\"stElementContainer\"]')"
                        ".getBoundingClientRect(); return [box.width, box.height]; }")
    assert box[0] <= 1 and box[1] <= 1, f"the text's element is drawn {box} px"
    snapshot = page.locator('[data-testid="stMain"]').aria_snapshot()
    assert "Attention weights, layer 2, head 5" in snapshot, "a screen reader finds it"

    press_chart_key(page, "head")
    expect_head(page, 6)
    expect(said).to_contain_text("Attention weights, layer 2, head 6:")
    assert weights_chart(page).is_visible()
