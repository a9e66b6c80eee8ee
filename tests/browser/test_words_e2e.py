"""Whole words in Chromium: the toggle turns the one-head chart's axis labels from WordPieces into words.

The heatmap is drawn on a canvas, which keeps no text to read back; so every text Vega writes on a canvas is
recorded as it is written (CanvasRenderingContext2D.fillText, wrapped before the page loads): the axis labels
among them.
"""

from __future__ import annotations

import re

import pytest

from harness.browser import act_and_measure, load_page
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

QUERY = "?text=photosynthesis+is+unbelievable&layer=2&head=5"  # photos ##yn ##thesis: one word in three pieces
RECORD_CANVAS_TEXT = """
window.drawnTexts = [];
const fillText = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
  window.drawnTexts.push(String(text));
  return fillText.call(this, text, ...rest);
};
"""


def drawn_texts(page) -> list[str]:
    return page.evaluate("() => window.drawnTexts")


@pytest.mark.own_tab  # an init script records what the canvas writes
def test_the_toggle_writes_whole_words_on_the_one_head_charts_axes(page, base_url):
    from playwright.sync_api import expect

    page.add_init_script(RECORD_CANVAS_TEXT)
    load_page(page, f"{base_url}/{QUERY}")
    page.wait_for_function("() => window.drawnTexts.includes('##yn')")
    tokens = drawn_texts(page)
    assert {"photos", "##yn", "##thesis", "unbelievable"} <= set(tokens)
    assert "photosynthesis" not in tokens

    page.evaluate("() => { window.drawnTexts = []; }")
    act_and_measure(page, page.locator(".st-key-words").get_by_text("Whole words").click)
    expect(page).to_have_url(re.compile(r"[?&]words=1(&|$)"))
    page.wait_for_function("() => window.drawnTexts.includes('photosynthesis')")
    words = drawn_texts(page)
    assert {"[CLS]", "photosynthesis", "is", "unbelievable", "[SEP]"} <= set(words)
    assert not {"photos", "##yn", "##thesis"} & set(words), "the pieces are gone from the axes"
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
