"""The App's routes under server.baseUrlPath: Streamlit serves the page at /BASE/ but mounts an App's routes at the
top, and the page's scripts ask relative to the page's own path. The switch view's press is answered by its route
there, and a class poll finds its route there too (components/api/routes.py)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from harness.browser import act_and_measure, wait_until_settled
from harness.server import APP, get_json, streamlit_server
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
BASE = "course/anatomy"


@pytest.fixture(scope="module")
def based_url(tmp_path_factory):
    with streamlit_server(APP, base_path=BASE, log_path=tmp_path_factory.mktemp("based") / "streamlit.log") as url:
        yield url


@pytest.mark.own_tab  # a page of another server
@pytest.mark.parametrize("slash", ["/", ""])
def test_a_press_is_answered_by_the_route_under_the_base_path(page, based_url, slash):
    page.goto(f"{based_url}{slash}?view=switch")
    toggles = page.locator(".st-key-switch_heads button")
    toggles.first.wait_for(timeout=120_000)
    wait_until_settled(page)
    with page.expect_response(lambda response: "/api/switch?" in response.url) as asked:
        act_and_measure(page, toggles.nth(3).click)
    assert urlsplit(asked.value.url).path == f"/{BASE}/api/switch" and asked.value.status == 200
    assert "1 head off" in asked.value.json()["html"]


def test_the_class_route_answers_under_the_base_path_too(based_url):
    status, body = get_json(f"{based_url}/api/class?code=ABCDEF")
    assert status == 200 and body == {"reachable": True, "version": None}
