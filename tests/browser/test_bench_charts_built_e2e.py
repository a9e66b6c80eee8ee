"""The bench's count of the charts a press builds anew (harness/browser.charts_built), in Chromium: on the neuron
view the Projection source's identity makes the head as wide as the hidden size, a new spec, so its chart is built
anew; a layer keeps the spec and swaps the chart's numbers in, and builds nothing. On the one-head view, weighting by
value norm changes the weights and the title, both data (heatmap.DataTitle): nothing is built anew, and the new
title is drawn."""

from __future__ import annotations

from harness.browser import charts_built, load_page, mark_charts, press_and_measure, press_slider_key, weights_chart
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS


def built_by(page, press) -> int:
    mark_charts(page)
    press()
    return charts_built(page)


def test_a_new_head_width_builds_the_neuron_chart_anew_and_a_layer_builds_nothing(page, base_url):
    load_page(page, f"{base_url}/?view=neuron&text=the+cat+sat+on+the+mat",
              drawn=lambda drawn: drawn.locator('[data-testid="stVegaLiteChart"] canvas').first)
    identity = page.locator(".st-key-source button", has_text="identity")
    assert built_by(page, lambda: press_and_measure(page, identity, "Space")) == 1
    assert built_by(page, lambda: press_slider_key(page, "layer")) == 0


def test_weighting_by_value_norm_builds_no_chart_and_its_title_says_so(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?text=the+cat+sat+on+the+mat")
    toggle = page.locator(".st-key-value_norm input[type='checkbox']")
    before = weights_chart(page).locator("canvas").first.evaluate("canvas => canvas.toDataURL()")
    assert built_by(page, lambda: press_and_measure(page, toggle, "Space")) == 0
    expect(weights_chart(page)).to_have_attribute("aria-label", "Attention weights")
    assert weights_chart(page).locator("canvas").first.evaluate("canvas => canvas.toDataURL()") != before
