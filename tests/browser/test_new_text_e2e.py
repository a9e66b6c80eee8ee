"""A new text of as many tokens in Chromium: the one-head chart writes the new tokens on its axes in the chart it had
drawn, its data swapped (charts/label_stand_ins.with_labels), not in a chart Vega built again.

The tokens reach the axes as datasets: a spec that held them changed with every text, and Streamlit then embedded
the whole chart anew. The canvas is the chart's own: Vega embedding a chart again draws on a new one.
"""

from __future__ import annotations

import pytest

from harness.browser import load_page, wait_until_settled, weights_chart
from tests.browser.test_words_e2e import RECORD_CANVAS_TEXT, drawn_texts
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

FIRST, SECOND = "the cat sat on the mat", "a dog lay by a door"  # eight tokens each, [CLS] and [SEP] with them


@pytest.mark.own_tab  # an init script records what the canvas writes
def test_a_new_text_of_as_many_tokens_is_written_on_the_chart_already_drawn(page, base_url):
    page.add_init_script(RECORD_CANVAS_TEXT)
    load_page(page, f"{base_url}/?text={FIRST.replace(' ', '+')}")
    page.wait_for_function("() => window.drawnTexts.includes('cat')")
    weights_chart(page).locator("canvas").evaluate("canvas => { window.firstCanvas = canvas; }")

    page.evaluate("() => { window.drawnTexts = []; }")
    text = page.locator(".st-key-text textarea")
    text.fill(SECOND)
    text.press("Control+Enter")
    page.wait_for_function("() => ['dog', 'door'].every(token => window.drawnTexts.includes(token))")
    wait_until_settled(page)

    assert "cat" not in drawn_texts(page), "the old text's tokens are gone from the axes"
    assert weights_chart(page).locator("canvas").evaluate("canvas => canvas === window.firstCanvas"), (
        "the chart was embedded again: its spec changed with the text")
