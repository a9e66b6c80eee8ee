"""GPT-2 in a real Chromium: a GPT-2 checkpoint folder opened by a link, its heads scrubbed on the chart, and the
causal mask seen in what the heatmap draws. The checkpoint is the tests' tiny GPT-2 (harness/checkpoints.py).

What the heatmap shows is read as its pixels (harness.browser.chart_pixels), and which cell holds which weight from
the tooltips a pointer over the picture brings up: every cell above the diagonal, a key after its query, holds 0.
"""

from __future__ import annotations

import re

import pytest

from components.charts.block import STEPS_ABOUT
from harness.browser import chart_input, chart_pixels, load_page, press_chart_key, weights_chart
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 1366, "height": 768}
TEXT = "the cat sat on the mat"
LAYERS, HEADS = 2, 4  # the tiny GPT-2's
GRID = 7  # points across and down the picture where the tooltip is read


@pytest.fixture(scope="module")
def base_url(gpt2_url):
    return gpt2_url


def link(tiny_gpt2_checkpoint, **params: str) -> str:
    return "?" + "&".join(f"{key}={value}" for key, value in
                          {"model": str(tiny_gpt2_checkpoint), "text": TEXT.replace(" ", "+"), **params}.items())


def test_every_head_of_gpt2_is_scrubbed_on_the_chart(page, base_url, tiny_gpt2_checkpoint):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/{link(tiny_gpt2_checkpoint)}")
    expect(page.get_by_text("a GPT-2 (a decoder: every token looks back only)", exact=False)).to_be_visible()
    pictures = [chart_pixels(page)]
    for layer in range(LAYERS):
        if layer:
            press_chart_key(page, "layer", "ArrowRight")
            expect(chart_input(page, "layer")).to_have_value(str(layer))
            pictures.append(chart_pixels(page))
        for head in range(1, HEADS):
            press_chart_key(page, "head", "ArrowRight")
            expect(chart_input(page, "head")).to_have_value(str(head))
            pictures.append(chart_pixels(page))
        if layer + 1 < LAYERS:
            for _ in range(HEADS - 1):
                press_chart_key(page, "head", "ArrowLeft")
    assert len(set(pictures)) == LAYERS * HEADS, "every head of every layer should have a picture of its own"
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_the_heatmap_draws_no_weight_above_the_diagonal(page, base_url, tiny_gpt2_checkpoint):
    from playwright.sync_api import Error

    from attention.models.loading import load_model
    from attention.text.encoding import encode

    tokens = encode(load_model(str(tiny_gpt2_checkpoint)), TEXT).tokens[0]
    position = {token: tokens.index(token) for token in tokens if tokens.count(token) == 1}  # labels read once
    load_page(page, f"{base_url}/{link(tiny_gpt2_checkpoint, head='2')}")
    box = weights_chart(page).locator("canvas, svg.marks").first.bounding_box()
    seen: dict[tuple[int, int], float] = {}
    for row in range(GRID):
        for column in range(GRID):
            page.mouse.move(box["x"] + box["width"] * (column + 0.5) / GRID,
                            box["y"] + box["height"] * (row + 0.5) / GRID)
            tip = page.locator("#vg-tooltip-element")
            try:
                tip.wait_for(state="visible", timeout=600)
            except Error:  # a point on the title or an axis: no cell, no tooltip
                continue
            found = re.search(r"query token\s+(\S+)\s+key token\s+(\S+)\s+Attention weights\s+(\d\.\d+)",
                              tip.inner_text())
            if found and found.group(1) in position and found.group(2) in position:
                seen[position[found.group(1)], position[found.group(2)]] = float(found.group(3))
    after = [weight for (query, key), weight in seen.items() if key > query]
    before = [weight for (query, key), weight in seen.items() if key <= query]
    assert len(after) >= 5 and len(before) >= 5, seen
    assert max(after) == 0.0, "a key after its query got weight"
    assert max(before) > 0.0


@pytest.mark.parametrize(("view", "charts_at_least"), [("lens", 1), ("generate", 3), ("block", 6)])
def test_the_views_past_the_attention_layer_draw_on_gpt2(page, base_url, tiny_gpt2_checkpoint, view, charts_at_least):
    """The lens's map, generation's query row and the what-if's two rows, the block's steps (one chart) among its
    others: drawn by Vega, with no error. (tests/page/test_views_past_attention.py holds their numbers to the
    core's.)"""
    from playwright.sync_api import expect

    charts = '[data-testid="stVegaLiteChart"]'
    load_page(page, f"{base_url}/{link(tiny_gpt2_checkpoint, view=view)}", drawn=lambda tab: tab.locator(
        f"{charts} svg, {charts} canvas").first)
    drawn = page.locator(charts).filter(has=page.locator("svg, canvas"))
    expect(drawn.nth(charts_at_least - 1)).to_be_attached()
    if view == "block":
        expect(page.locator(f'{charts}[aria-label="{STEPS_ABOUT}"]').locator("svg, canvas").first).to_be_attached()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(page.locator('[data-testid="stAlert"]')).to_have_count(0)
