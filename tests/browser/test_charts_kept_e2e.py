"""A press that changes no chart's spec builds no chart anew, in Chromium: a note that comes and goes above a chart
stands in a slot of its own, so that the chart keeps its place in the page's tree and the browser swaps its numbers
in (a chart moved in the tree is mounted anew from its spec, Vega compiling it and laying it out again)."""

from __future__ import annotations

from bench.page_speed import CHART_DRAWN, CHARTS_BUILT_JS, MARK_CHARTS_JS
from harness.browser import load_page, press_and_measure
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

TEXT = "the+cat+sat+on+the+mat"


def _visible_chart(page):
    return page.locator(CHART_DRAWN).filter(visible=True).first


def built_by_pressing(page, selector: str) -> int:
    """The charts a press of selector's element (Space) built anew."""
    page.evaluate(MARK_CHARTS_JS)
    press_and_measure(page, page.locator(selector).first, "Space")
    return page.evaluate(CHARTS_BUILT_JS)


def test_the_lessons_charts_stay_when_another_source_adds_its_note(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?view=lesson&step=3&text={TEXT}", drawn=_visible_chart)
    note = page.get_by_text("This step shows the model's trained weights").filter(visible=True)
    expect(note).to_have_count(0)
    assert built_by_pressing(page, ".st-key-source button:has-text('random')") == 0
    expect(note).to_have_count(1)
    assert built_by_pressing(page, ".st-key-source button:has-text('trained')") == 0
    expect(note).to_have_count(0)


def test_the_scaling_labs_charts_stay_when_another_source_adds_its_note(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?view=lab&text={TEXT}", drawn=_visible_chart)
    note = page.get_by_text("Always the trained heads, whatever the projection source")
    expect(note).to_have_count(0)
    assert built_by_pressing(page, ".st-key-source button:has-text('random')") == 0
    expect(note).to_have_count(1)


def test_whole_words_on_a_stage_of_tokens_say_so_and_keep_its_chart(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?head_stage=scores&text={TEXT}", drawn=_visible_chart)
    note = page.get_by_text("This stage shows tokens, not whole words")
    expect(note).to_have_count(0)
    assert built_by_pressing(page, ".st-key-words input[type='checkbox']") == 0
    expect(note).to_have_count(1)
