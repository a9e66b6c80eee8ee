"""The scaling lab's section 4 in Chromium: its query token, picked from the keyboard, reruns the section alone (a
fragment of its own), and the link and its words follow the pick."""

from __future__ import annotations

import re

import pytest

from harness.browser import wait_until_settled
from tests.browser.test_lab_tau_e2e import open_lab
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

@pytest.mark.own_tab  # a tab of its own, in front: a tab another test left behind took no Enter on its list
def test_a_query_token_picked_redraws_its_row_and_the_link_keeps_it(page, base_url):
    from playwright.sync_api import expect

    page.bring_to_front()
    open_lab(page, base_url, "&text=time+flies+like+an+arrow&query=1")
    page.set_default_timeout(15_000)  # open_lab's is for the lab's first opening
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
