"""The shapes panel beside the guided lesson in a real Chromium: it describes the step shown, switching with it at the
press (step 2 is the identity, unscaled; step 3 the trained head), as the step itself does."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS


def test_the_panel_beside_a_step_describes_that_step_and_follows_it(page, base_url):
    page.goto(f"{base_url}/?view=lesson&step=2")
    page.locator(".st-key-lesson_next button").wait_for()
    panel = page.locator('[data-testid="shapes-panel"]')
    page.locator('body[data-lesson-step="2"]').wait_for(state="attached")
    expect(panel).to_contain_text("Q = X (identity: no W_q, no b_q)")
    shown = panel.inner_text()  # what is drawn: a list the browser hides has no text here
    assert "scores / 1" in shown and "√d_k" not in shown and "split[:, 0]" not in shown
    page.locator(".st-key-lesson_next button").click()
    expect(page.get_by_text("Step 3 of 11: Query, key and value projections")).to_be_visible()
    expect(panel).to_contain_text("scores / √d_k = √32")
    shown = panel.inner_text()
    assert "Q = Q split[:, 0]" in shown and "identity" not in shown
