"""A 2,000-word essay pasted into the text box, in a real Chromium: the box keeps its first MAX_TEXT_CHARS
characters and the page says so under it. With the box's max_chars, the browser dropped such a paste whole: the old
text stayed, and nothing was said."""

from __future__ import annotations

from components.page.page_state import MAX_TEXT_CHARS
from harness.browser import act_and_measure, load_page
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
ESSAY = " ".join(f"word{n}" for n in range(1_700))


def test_an_essay_pasted_is_cut_to_the_limit_with_a_notice(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?text=time+flies")
    box = page.locator(".st-key-text textarea")
    box.fill(ESSAY)
    act_and_measure(page, lambda: box.press("Control+Enter"))  # a text area commits on Ctrl+Enter
    expect(box).to_have_value(ESSAY[:MAX_TEXT_CHARS])
    expect(page.locator('[data-testid="stSidebar"] [data-testid="stAlert"]')).to_contain_text(
        f"The text pasted had {len(ESSAY):,} characters: the page keeps the first {MAX_TEXT_CHARS:,}.")
