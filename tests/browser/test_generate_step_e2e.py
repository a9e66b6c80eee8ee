"""The generation view in a real Chromium: the chart's own Step input shows a step's query rows at once, before the
server answers (every step's rows at the layer are in the browser: charts/generation.py), and the rerun that follows
brings the caption under it up to that step; and the StreamingLLM what-if, a fragment of its own, follows its sliders
and writes them into the link. What a cell holds is read from its tooltip and held to the
core's numbers (whose parity with transformers is tests/core/test_generation.py's). The model is the tests' tiny
GPT-2 (harness/checkpoints.py), offered to the server as a configured folder.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from attention.experiments.generation import GenerationSettings, StreamingSettings, generate, streaming_what_if
from attention.models.lm_heads import load_language_model
from components.charts.generation import STEP
from harness.browser import (
    HeldReplies,
    chart_input,
    chart_input_readout,
    load_page,
    slider_thumb,
    wait_until_settled,
)
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 1366, "height": 1400}  # tall: the step's chart on screen with the table above it
TEXT = "what if it rains tomorrow"
NEW_TOKENS = 8  # the page's default: steps 0 (the prefill) to 7
LAYER = 0
TITLE = "The new token's query row over the cache"
NOT_CACHED = "not cached yet"  # a key not cached yet holds no weight: its cell is grey, its tooltip says so


@pytest.fixture(scope="module")
def base_url(gpt2_url):
    return gpt2_url


@pytest.fixture(scope="module")
def generation(tiny_gpt2_checkpoint):
    return generate(load_language_model(str(tiny_gpt2_checkpoint)), TEXT,
                    GenerationSettings(max_new_tokens=NEW_TOKENS, stop_at_end=False))


def step_chart(page):
    return page.locator(f'[data-testid="stVegaLiteChart"][aria-label^="{TITLE}"]').first


def open_generation(page, base_url: str, tiny_gpt2_checkpoint) -> None:
    load_page(page, f"{base_url}/?model={tiny_gpt2_checkpoint}&text={TEXT.replace(' ', '+')}&view=generate",
              drawn=lambda tab: step_chart(tab).locator("svg.marks, canvas").first)


def cell_tooltip(page, heads: int, keys: int, head: int, key: int) -> dict[str, str]:
    """The tooltip of the cell of query head `head` and cached key `key`, the pointer on it: its rows by name. The
    cells are the chart's rect marks (SVG), a row of keys a head."""
    cell = step_chart(page).locator("g.mark-rect.role-mark path").nth(head * keys + key)
    cell.hover(force=True)
    tip = page.locator("#vg-tooltip-element.visible")
    tip.locator(f"tr:has-text('query head') >> text=/^{head}$/").wait_for()
    rows = tip.locator("tr").evaluate_all(
        "rows => rows.map(row => [...row.children].map(cell => cell.innerText.trim()))")
    assert page.locator("g.mark-rect.role-mark path").count() >= heads * keys
    return {name.rstrip(":"): value for name, value in rows}


def shown_weight(row: dict[str, str]) -> str:
    [value] = [value for name, value in row.items() if name.startswith(TITLE)]
    return value


@pytest.mark.own_tab  # its websocket is held
def test_a_step_move_shows_that_steps_row_before_the_server_answers(page, base_url, tiny_gpt2_checkpoint, generation):
    from playwright.sync_api import expect

    replies = HeldReplies.on(page)
    open_generation(page, base_url, tiny_gpt2_checkpoint)
    prompt = len(generation.prompt_ids)
    heads, keys = generation.steps[0].weights.shape[1], len(generation.steps[-1].cache_positions)
    expect(page.get_by_text("Step 0, layer 0: the query row of token")).to_be_visible()

    step = replies.press(page, STEP)  # to step 1, the server's answers held from now on
    for _ in range(2):  # on to step 3
        step.press("ArrowRight")
    expect(chart_input_readout(page, STEP)).to_have_text("3")
    weights = generation.steps[3].weights[LAYER]  # (nh, S of step 3: the text and three fed tokens)
    newest = prompt + 2  # the key step 3 cached: the token fed at step 2's end
    for head in range(heads):
        for key in (0, newest):
            shown = shown_weight(cell_tooltip(page, heads, keys, head, key))
            assert float(shown) == pytest.approx(float(weights[head, key]), abs=6e-5), (head, key, shown)
        assert shown_weight(cell_tooltip(page, heads, keys, head, newest + 1)).startswith(NOT_CACHED), "at step 3"
    # the server's page, not moved yet
    expect(page.get_by_text("Step 0, layer 0: the query row of token")).to_be_visible()
    assert replies.wait_until_held(page), "the move asked the server for no rerun"

    replies.release()
    wait_until_settled(page)
    fed = generation.tokens[generation.steps[3].position]
    expect(page.get_by_text(re.compile(
        rf"Step 3, layer {LAYER}: the query row of token {newest}, {re.escape(repr(fed))}"))).to_be_visible()
    expect(chart_input(page, STEP)).to_have_value("3")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_the_streaming_what_if_follows_its_sliders_and_the_link_keeps_them(page, base_url, tiny_gpt2_checkpoint):
    from playwright.sync_api import expect

    open_generation(page, base_url, tiny_gpt2_checkpoint)
    slider_thumb(page, "sinks").press("ArrowLeft")  # from the page's 4 first tokens kept to 3, then 2
    wait_until_settled(page)
    slider_thumb(page, "sinks").press("ArrowLeft")
    expect(page.get_by_text("Both caches hold 6 entries")).to_be_visible()  # 2 kept + the last 4
    wait_until_settled(page)
    link = {name: values[-1] for name, values in parse_qs(urlsplit(page.url).query).items()}
    assert link["sinks"] == "2" and link.get("recent", "4") == "4", link
    model = load_language_model(str(tiny_gpt2_checkpoint))
    what_if = streaming_what_if(model, TEXT, StreamingSettings(sinks=2, window=4),
                                GenerationSettings(max_new_tokens=NEW_TOKENS, stop_at_end=False))
    prompt = len(what_if.kept.prompt_ids)
    rows = page.locator('[data-testid="generate-streaming"] tbody tr').evaluate_all(
        "rows => rows.map(row => [...row.children].map(cell => cell.textContent))")
    assert rows == [["first 2 kept + last 4", " · ".join(what_if.kept.tokens[prompt:])],
                    ["last 6 only", " · ".join(what_if.evicted.tokens[prompt:])]]
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
