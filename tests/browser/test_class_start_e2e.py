"""A teacher's first minute, at 1280×720: Start a class stands at the sidebar's foot; pressing it says the class
started and brings the sidebar back to its top, where the new code, link and QR code are. The press used to leave
the sidebar scrolled to its foot, the class's panel out of view, and nothing said that a class had started."""

from __future__ import annotations

from harness.browser import act_and_measure, load_page
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 1280, "height": 720}
SIDEBAR = '[data-testid="stSidebarContent"]'


def test_starting_a_class_says_so_and_shows_its_panel(page, base_url):
    from playwright.sync_api import expect

    load_page(page, base_url)
    start = page.get_by_role("button", name="Start a class")
    start.scroll_into_view_if_needed()
    assert page.locator(SIDEBAR).evaluate("bar => bar.scrollTop") > 0, "the button is below the first screen"
    act_and_measure(page, start.click)
    expect(page.get_by_test_id("stToast")).to_contain_text("started: your students open the link")
    page.wait_for_function(f"() => document.querySelector('{SIDEBAR}').scrollTop === 0")
    code = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary')
    expect(code).to_contain_text("the students' link")
    expect(code).to_be_in_viewport()
    expect(page.get_by_alt_text("QR code of the students' link")).to_be_in_viewport()
