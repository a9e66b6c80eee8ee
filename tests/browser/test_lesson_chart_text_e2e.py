"""The lesson's chart texts in Chromium: a screen reader finds the texts of the step shown and none of the steps drawn
beside it (hidden with their containers), and when Next shows the next step, its texts and no longer the last step's.
That no text is drawn, here and on every view, is checked on the layout's walk (harness/axe.drawn_chart_texts)."""

from __future__ import annotations

from harness.browser import act_and_measure, load_page, wait_for_lesson_steps
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

SCORES = "Scores E·Eᵀ (no projection, no scaling): 7 × 7 (query token × key token)"  # step 2's chart
QUERIES = "Q, layer 0, head 0: 7 × 32 (token × dimension of the head)"  # step 3's first chart


def drawn_boxes(page) -> list[list[float]]:
    """The width and height of every chart text's element on the page."""
    return page.locator(".aa-chart-text").evaluate_all(
        "texts => texts.map(p => { const box = p.closest('[data-testid=\"stElementContainer\"]')"
        ".getBoundingClientRect(); return [box.width, box.height]; })")


def read_aloud(page) -> str:
    """What a screen reader finds in the page's main area: its accessibility tree, as text."""
    return page.locator('[data-testid="stMain"]').aria_snapshot()


def test_only_the_shown_steps_texts_are_read_and_they_follow_next(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?view=lesson&step=2", drawn=lambda p: p.locator(".st-key-lesson_step_2 canvas").first)
    page.locator('body[data-lesson-step="2"]').wait_for(state="attached")
    wait_for_lesson_steps(page, 3)
    assert page.locator(".aa-chart-text", has_text=QUERIES).count() == 1, "step 3 is drawn beside step 2"
    heard = read_aloud(page)
    assert SCORES in heard and QUERIES not in heard, heard
    assert all(width <= 1 and height <= 1 for width, height in drawn_boxes(page)), drawn_boxes(page)

    act_and_measure(page, page.locator(".st-key-lesson_next button").click)
    expect(page.get_by_text("Step 3 of 11: Query, key and value projections")).to_be_visible()
    heard = read_aloud(page)
    assert QUERIES in heard and SCORES not in heard, heard
