"""The page as a projector and a phone show it: what lies where, read from the elements' boxes in Chromium.

A test that a chart exists says nothing about where it lies: these open pages at the sizes a class uses
(a 1280×720 projector, a 1366×768 laptop, a 390×844 phone) and check the boxes of what they draw.
"""

from __future__ import annotations

import pytest

from harness.browser import load_page, open_tab, wait_until_settled, weights_chart
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

PROJECTOR, LAPTOP, PHONE = {"width": 1280, "height": 720}, {"width": 1366, "height": 768}, {"width": 390, "height": 844}
LONG_TEXT = "+".join(["the", "river", "bank", "was", "muddy", "after", "rain"] * 6)  # 42 words: 44 tokens


def chips_height(page) -> float:
    return page.locator('[data-testid="token-chips"]').bounding_box()["height"]


def chip_rows(page) -> int:
    """How many rows of chips can be seen: the distinct tops of the chips inside the chips' visible box."""
    return page.locator('[data-testid="token-chips"]').evaluate("""chips => {
        const shown = chips.getBoundingClientRect();
        const tops = [...chips.querySelectorAll('.aa-chip')].map(chip => chip.getBoundingClientRect())
            .filter(box => box.bottom <= shown.bottom + 1).map(box => Math.round(box.top));
        return new Set(tops).size;
    }""")


@pytest.mark.parametrize("viewport", [PROJECTOR, PHONE], ids=["projector", "phone"])
def test_a_long_texts_chips_fold_to_one_row_that_opens(browser, base_url, viewport):
    page = open_tab(browser, viewport=viewport)
    try:
        load_page(page, f"{base_url}/?text={LONG_TEXT}")
        assert page.locator('[data-testid="token-chips"] .aa-chip').count() == 44, "every chip is on the page"
        assert chip_rows(page) == 1
        folded = chips_height(page)

        page.locator('[data-testid="token-fold"] summary').click()
        assert chip_rows(page) > 1
        assert chips_height(page) > folded

        page.locator('[data-testid="token-fold"] summary').click()
        assert chip_rows(page) == 1
    finally:
        page.context.close()


def test_a_short_texts_chips_are_not_folded(page, base_url):
    load_page(page, f"{base_url}/?text=time+flies+like+an+arrow")
    assert page.locator('[data-testid="token-fold"]').count() == 0
    assert page.locator('[data-testid="token-chips"] .aa-chip').count() == 7


@pytest.mark.parametrize(("view", "shown"), [("head", True), ("neuron", True), ("compare", False)])
def test_the_shapes_panel_shows_where_it_describes_the_view(page, base_url, view, shown):
    page.goto(f"{base_url}/?view={view}")
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for()
    wait_until_settled(page)
    assert page.locator('[data-testid="shapes-panel"]').count() == (1 if shown else 0)
    if shown:  # in an expander, open at first
        assert page.locator('[data-testid="stExpander"]').filter(has_text="Tensor shapes").count() == 1
        assert page.locator('[data-testid="shapes-panel"] li').first.is_visible()


@pytest.mark.parametrize("viewport", [PROJECTOR, LAPTOP], ids=["projector", "laptop"])
def test_the_charts_layer_and_head_inputs_stand_in_one_row(browser, base_url, viewport):
    page = open_tab(browser, viewport=viewport)
    try:
        load_page(page, f"{base_url}/?text=time+flies+like+an+arrow")
        layer, head = (weights_chart(page).locator(f'input[name="{name}_{name}"]').bounding_box()
                       for name in ("layer", "head"))
        assert abs(layer["y"] - head["y"]) < 2 and head["x"] > layer["x"] + layer["width"]
    finally:
        page.context.close()
