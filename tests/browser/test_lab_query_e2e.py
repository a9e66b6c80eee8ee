"""The scaling lab's section 4 in Chromium: its query token, picked from the keyboard, reruns the section alone (a
fragment of its own), and the link and its words follow the pick."""

from __future__ import annotations

import re

import pytest

from harness.browser import load_page, wait_until_settled
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

OPEN_TIMEOUT_MS = 180_000  # the first lab of a server loads the model and measures softmax at every τ


@pytest.mark.own_tab  # a tab of its own, in front: a tab another test left behind took no Enter on its list
def test_a_query_token_picked_redraws_its_row_and_the_link_keeps_it(page, base_url):
    from playwright.sync_api import expect

    page.bring_to_front()
    page.set_default_timeout(OPEN_TIMEOUT_MS)
    load_page(page, f"{base_url}/?view=lab&text=time+flies+like+an+arrow&query=1",
              drawn=lambda tab: tab.locator(".st-key-chart-random-softmax svg.marks"))
    page.set_default_timeout(15_000)
    expect(page.get_by_text("Query token 1: time.")).to_be_visible()
    choice = page.locator(".st-key-query input[role='combobox']")
    choice.focus()
    choice.press("ArrowDown")  # opens the list on the next token, 2
    page.get_by_role("option", name="2: flies").wait_for()  # an Enter before the list stands chooses nothing
    choice.press("Enter")
    expect(page.get_by_text("Query token 2: flies.")).to_be_visible()
    wait_until_settled(page)
    assert re.search(r"[?&]query=2(&|$)", page.url), page.url
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
