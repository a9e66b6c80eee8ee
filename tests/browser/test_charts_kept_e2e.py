"""A press that changes no chart's spec builds no chart anew, in Chromium: a note that comes and goes above a chart
stands in a slot of its own, so that the chart keeps its place in the page's tree and the browser swaps its numbers
in (a chart moved in the tree is mounted anew from its spec, Vega compiling it and laying it out again)."""

from __future__ import annotations

import pytest

from harness.browser import charts_built, load_page, mark_charts, press_and_measure
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

TEXT = "the+cat+sat+on+the+mat"
SOURCE = ".st-key-source button:has-text('{}')"
WORDS = ".st-key-words input[type='checkbox']"

# Each view with a note that a press brings and a press takes away: its link, the note's words, and the presses
# that bring it and take it away again.
NOTES = {
    "the lesson's trained weights": ("view=lesson&step=3", "This step shows the model's trained weights",
                                     SOURCE.format("random"), SOURCE.format("trained")),
    "the scaling lab's trained heads": ("view=lab", "Always the trained heads, whatever the projection source",
                                       SOURCE.format("random"), SOURCE.format("trained")),
    "a stage of tokens under whole words": ("head_stage=scores", "This stage shows tokens, not whole words",
                                            WORDS, WORDS),
}


def built_by_pressing(page, selector: str) -> int:
    """The charts a press of selector's element (Space) built anew."""
    mark_charts(page)
    press_and_measure(page, page.locator(selector).first, "Space")
    return charts_built(page)


@pytest.mark.parametrize("link, words, bring, take", NOTES.values(), ids=NOTES.keys())
def test_a_note_that_comes_and_goes_builds_no_chart_anew(page, base_url, link, words, bring, take):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?{link}&text={TEXT}", drawn=lambda drawn: drawn.locator(
        '[data-testid="stVegaLiteChart"] :is(canvas, svg)').filter(visible=True).first)
    note = page.get_by_text(words).filter(visible=True)
    expect(note).to_have_count(0)
    assert built_by_pressing(page, bring) == 0
    expect(note).to_have_count(1)
    assert built_by_pressing(page, take) == 0
    expect(note).to_have_count(0)
