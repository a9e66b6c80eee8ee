"""Streamlit's chart toolbar (show data, PNG, spec, fullscreen) leaves the caption above the counting lab's maps and
the induction lab's maps readable: it hung over the 47 px above a chart, on the caption's words."""

from __future__ import annotations

import pytest

from harness.browser import load_page, wait_until_settled
from tests.browser.test_head_toolbar_e2e import overlap, resting_box
from tests.browser.test_induction_e2e import train_button
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 1366, "height": 768}
INDUCTION = "?view=induction&steps=100&heads=4&vocab=8&periods=2-6&seed=23"


def opened(page, base_url: str, view: str) -> None:
    from playwright.sync_api import expect

    if view == "counting":
        load_page(page, f"{base_url}/?view=counting", drawn=lambda page: page.locator(".st-key-chart-count-window"))
        return
    load_page(page, base_url + "/" + INDUCTION, drawn=train_button)
    if train_button(page).is_enabled():
        train_button(page).click()
    expect(page.get_by_text("Trained 100 steps in").first).to_be_visible(timeout=180_000)
    wait_until_settled(page)


CHARTS = {"counting": ".st-key-chart-count-window",
          "induction": "[data-testid='stElementContainer']:has([aria-label^='Every head'])"}


@pytest.mark.parametrize("view", list(CHARTS))
def test_the_toolbar_leaves_the_caption_above_the_maps_free(page, base_url, view):
    from playwright.sync_api import expect

    opened(page, base_url, view)
    chart = page.locator(CHARTS[view])
    chart.scroll_into_view_if_needed()
    caption = chart.locator("xpath=preceding::*[@data-testid='stCaptionContainer'][1]")
    chart.locator("[data-testid='stVegaLiteChart']").hover()
    toolbar = chart.locator("[data-testid='stElementToolbar']")
    expect(toolbar).to_be_visible()
    assert not overlap(resting_box(page, toolbar), caption.bounding_box()), "the toolbar lies over the caption"
