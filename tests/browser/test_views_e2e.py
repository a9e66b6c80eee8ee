"""The all-heads view and the atlas in a real Chromium (clicks on their charts). Every view is opened by its link,
and must draw its charts with no traceback, on the layout's walk (tests/browser/test_layout_e2e.py).

One server for all browser tests, a fresh tab (so a fresh Streamlit session) per test (tests/browser/conftest.py).
The grid is the page's first stVegaLiteChart: one SVG holding a picture (an <image>) per head of every
layer sent, head 0 first, drawn row by row, whatever the text's length; those of the layers not shown are
0 px wide.
"""

from __future__ import annotations

import re

import pytest

from harness.browser import act_and_measure, chart_input, wait_until_settled
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 1400, "height": 1400}  # tall: the grid's rows fit


def charts(page):
    return page.locator('[data-testid="stVegaLiteChart"]')


def open_page(page, base_url: str, query: str) -> None:
    page.goto(f"{base_url}/{query}")
    charts(page).first.locator("svg, canvas").first.wait_for()
    wait_until_settled(page)


def assert_one_head_view(page, layer: int, head: int) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_role("radio", name="One head")).to_be_checked()
    expect(page).to_have_url(re.compile(rf"[?&]head={head}(&|$)"))
    assert "view=" not in page.url, "the default view leaves the URL"
    expect(chart_input(page, "layer")).to_have_value(str(layer))  # the heatmap's own inputs, in this view
    expect(chart_input(page, "head")).to_have_value(str(head))
    expect(page.get_by_role("heading", name=f"Layer {layer}, head {head}", exact=True)).to_be_visible()
    expect(page.locator(".st-key-head_stage").get_by_text("Context", exact=True)).to_be_visible()  # One head view only
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.parametrize("words", [5, 70], ids=["short", "long"])
def test_clicking_a_head_in_the_grid_opens_it(words, page, base_url):
    text = "+".join(["word"] * words)
    open_page(page, base_url, f"?view=heads&layer=2&text={text}")
    head_five = charts(page).first.locator('image:not([width="0"])').nth(5)  # of the layer shown
    head_five.scroll_into_view_if_needed()
    box = head_five.bounding_box()
    act_and_measure(page, lambda: page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2))
    assert_one_head_view(page, layer=2, head=5)


def test_clicking_an_overview_cell_opens_that_layer_and_head(page, base_url):
    open_page(page, base_url, "?view=heads")
    cell = charts(page).filter(has_text="mean entropy").locator('path[aria-label^="column: 3; row: 4;"]')
    cell.scroll_into_view_if_needed()
    act_and_measure(page, cell.click)
    assert_one_head_view(page, layer=4, head=3)


def test_clicking_a_glyph_of_the_head_atlas_opens_that_head(page, base_url):
    """The atlas's grid: one glyph per head (a Vega symbol, described as "head: 2; layer: 0; label: …")."""
    open_page(page, base_url, "?view=atlas&atlas=text")
    glyph = charts(page).first.locator('path[aria-label^="head: 7; layer: 3;"]')
    glyph.scroll_into_view_if_needed()
    act_and_measure(page, glyph.click)
    assert_one_head_view(page, layer=3, head=7)

