"""The generation view's step chart says its step to a screen reader in a real Chromium, and follows its own Step
input: moved by the keyboard, the chart repaints in the browser and the rerun that follows brings the text
alternative (charts/generation.describe_rows) to that step, as the core computes it. The model is the tests' tiny
GPT-2 (harness/checkpoints.py), offered to the server as a configured folder."""

from __future__ import annotations

import re

import pytest

from attention.experiments.generation import GenerationSettings, generate
from attention.models.lm_heads import load_language_model
from components.charts.generation import STEP
from harness.browser import chart_input, load_page, press_chart_key
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
TEXT = "what if it rains tomorrow"
NEW_TOKENS = 8  # the page's default
TITLE = "Layer 0: the new token's query row over the cache"


@pytest.fixture(scope="module")
def base_url(gpt2_url):
    return gpt2_url


def test_the_step_charts_text_follows_its_step_input(page, base_url, tiny_gpt2_checkpoint):
    from playwright.sync_api import expect

    generation = generate(load_language_model(str(tiny_gpt2_checkpoint)), TEXT,
                          GenerationSettings(max_new_tokens=NEW_TOKENS, stop_at_end=False))
    chart = page.locator(f'[data-testid="stVegaLiteChart"][aria-label^="{TITLE}"]').first
    load_page(page, f"{base_url}/?model={tiny_gpt2_checkpoint}&text={TEXT.replace(' ', '+')}&view=generate",
              drawn=lambda tab: chart.locator("svg.marks, canvas").first)
    said = page.locator(".aa-chart-text", has_text="Generation step")
    expect(said).to_have_count(1)
    expect(said).to_contain_text("Generation step 0 (the prefill), layer 0: the query of ")
    assert said.get_attribute("aria-live") == "polite"

    for _ in range(2):
        press_chart_key(page, STEP)
    expect(chart_input(page, STEP)).to_have_value("2")
    step = generation.steps[2]
    fed = generation.tokens[step.position]
    expect(said).to_contain_text(re.compile(
        rf"^Generation step 2, layer 0: the query of {re.escape(repr(fed))}, token {step.position}: 4 heads over "
        rf"{len(step.cache_positions)} cached keys\. Largest weights: head \d"))
    snapshot = page.locator('[data-testid="stMain"]').aria_snapshot()
    assert "Generation step 2, layer 0" in snapshot, "a screen reader finds it"
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
