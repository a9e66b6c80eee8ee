"""What a head moves, in a real Chromium: the Moves button opens α·‖f(x)‖ of the head, whose own head input
repaints it in the browser, and the "Weight by value norm" toggle changes the weights heatmap.
What a chart shows is read as its pixels (harness.browser.chart_pixels)."""

from __future__ import annotations

import re

from harness.browser import act_and_measure, chart_pixels, load_page, press_chart_key
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

QUERY = "?text=the+cat+sat+on+the+mat,+and+then+it+slept.&layer=3"
STAGE_BUTTONS = ".st-key-head_stage button"
# The bottom fifth of the Moves chart's canvas: the ‖f(x_j)‖ bars drawn in it, under the heatmap (and its title,
# which names the layer and head its inputs hold).
BARS_PIXELS_JS = """chart => {
  const canvas = chart.querySelector('canvas');
  const strip = Math.round(canvas.height / 5);
  const pixels = canvas.getContext('2d').getImageData(0, canvas.height - strip, canvas.width, strip).data;
  let hash = 0;
  for (let i = 0; i < pixels.length; i++) hash = (hash * 31 + pixels[i]) | 0;
  return hash;
}"""


def moves_chart(page):
    return page.locator(".st-key-chart-moved [data-testid='stVegaLiteChart']").first


def test_the_moves_stage_scrubs_through_the_heads(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/{QUERY}")
    act_and_measure(page, page.locator(STAGE_BUTTONS).filter(has_text="Moves").click)
    chart = moves_chart(page)
    expect(chart).to_be_visible()
    pictures, bars = [chart_pixels(page, chart)], [chart.evaluate(BARS_PIXELS_JS)]
    for head in (1, 2):
        press_chart_key(page, "head", "ArrowRight")
        pictures.append(chart_pixels(page, chart))
        bars.append(chart.evaluate(BARS_PIXELS_JS))
        assert pictures[-1] != pictures[-2], f"what head {head} moves was not drawn"
        assert bars[-1] != bars[-2], f"the ‖f(x_j)‖ bars of head {head} were not drawn under it"
    expect(page.get_by_role("heading", name="Layer 3, head 2", exact=True)).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_weight_by_value_norm_changes_the_weights_heatmap(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/{QUERY}")
    before = chart_pixels(page)
    act_and_measure(page, page.locator(".st-key-value_norm label").click)
    expect(page).to_have_url(re.compile(r"[?&]value_norm=1(&|$)"))
    after = chart_pixels(page)
    assert after != before, "the weights weighted by value norm look like the weights"
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
