"""deploy/nginx.conf, as committed, limits how often one address may ask the App's routes, and nothing else: a loop
of requests gets nginx's own 429 past a burst, a class's polls at their pace never do, and pages are not counted.

One app server stands behind both of the config's replicas (the limit is nginx's, whatever answers behind it)."""

from __future__ import annotations

import secrets
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

import pytest

from components.classroom.classroom import POLL_S
from harness.nginx import nginx_proxy
from harness.server import APP, port_of, streamlit_server
from tests.marks import NEEDS_NGINX

pytestmark = [pytest.mark.deploy, *NEEDS_NGINX]

_CODE_LETTERS = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("api-limits")
    with streamlit_server(APP, log_path=folder / "streamlit.log") as url:
        port = port_of(url)
        with nginx_proxy((port, port), folder / "nginx") as running:
            yield running.url


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def random_code() -> str:
    return "".join(secrets.choice(_CODE_LETTERS) for _ in range(6))


def flood(urls: list[str]) -> Counter:
    """Every url asked at once by eight threads: far above either route's rate on any machine."""
    with ThreadPoolExecutor(8) as pool:
        return Counter(pool.map(status_of, urls))


def test_a_loop_on_the_switch_route_is_cut_by_nginx_past_its_burst(proxy):
    answers = flood([f"{proxy}/api/switch?{urlencode({'ask': secrets.token_urlsafe(16)})}" for _ in range(300)])
    assert set(answers) == {404, 429} and answers[429] >= 100, answers
    assert status_of(f"{proxy}/?view=switch") == 200, "a page is never counted"


def test_a_loop_on_the_class_route_is_cut_and_a_class_at_its_pace_is_not(proxy):
    answers = flood([f"{proxy}/api/class?{urlencode({'code': random_code()})}" for _ in range(1200)])
    assert set(answers) == {200, 429} and answers[429] >= 200, answers
    time.sleep(3)  # the address's bucket drains at 100 a second
    code = random_code()
    polls = []
    for _ in range(8):  # one follower polling at the page's pace
        polls.append(status_of(f"{proxy}/api/class?{urlencode({'code': code, 'beat': secrets.token_hex(8)})}"))
        time.sleep(POLL_S)
    assert polls == [200] * 8
