"""A teacher's move reaches a student's page in Chromium by the ask the page's watch had already sent, which the
server held (components/server/class_waits.py), not by one the page sent after the move, as a poll every POLL_S
heard of it: the move does not wait for the student's poll period to pass.

The server holds an ask for an hour here (class_waits.WAIT_ENV), so that the ask under way when the teacher moves
is still held when the class hears of the move, however slow the machine.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from urllib.parse import parse_qs, urlsplit

import pytest

from components.caches.offered import MODEL_DIRS_ENV
from components.page.page_state import DEFAULT_MODEL_ENV
from components.server.class_store import STORE_ENV
from components.server.class_waits import WAIT_ENV
from harness.browser import expect_head, launch_chromium, load_page, open_tab, press_chart_key
from harness.server import APP, get_json, streamlit_server
from tests.marks import NEEDS_CHROMIUM

pytestmark = [pytest.mark.deploy, *NEEDS_CHROMIUM]

TEXT = "the teacher moves and the class hears it"
ASKS_UNDER_WAY_S = 30  # seconds for the student's page to have an ask under way: its watch sends one at once


def is_ask(request) -> bool:
    return "/api/class?" in request.url


def told(ask) -> str:
    """An answered ask's query and its answer, for a failure's message."""
    response = None if ask.failure else ask.response()
    answer = ask.failure or ("no response" if response is None else f"{response.status} {response.text()}")
    return f"{ask.url.partition('?')[2]}: {answer}"


def test_a_students_page_hears_the_teachers_move_by_the_ask_it_sent_before_it(tiny_checkpoint):
    from playwright.sync_api import sync_playwright

    env = {MODEL_DIRS_ENV: str(tiny_checkpoint), DEFAULT_MODEL_ENV: str(tiny_checkpoint), STORE_ENV: "memory",
           WAIT_ENV: "3600"}
    with ExitStack() as stack:
        base_url = stack.enter_context(streamlit_server(APP, env=env))
        browser = launch_chromium(stack.enter_context(sync_playwright()))
        stack.callback(browser.close)
        teacher, student = open_tab(browser), open_tab(browser)
        load_page(teacher, f"{base_url}/?teach=1&text={TEXT.replace(' ', '+')}")
        code = parse_qs(urlsplit(teacher.url).query)["class"][-1]
        # The class's asks as sent, and as answered (or failed): the page's other requests are no concern here.
        asks, answered = [], []
        student.on("request", lambda request: asks.append(request) if is_ask(request) else None)
        student.on("requestfinished", lambda request: answered.append(request) if is_ask(request) else None)
        student.on("requestfailed", lambda request: answered.append(request) if is_ask(request) else None)
        load_page(student, f"{base_url}/?class={code}")
        expect_head(student, 0)

        for _ in range(ASKS_UNDER_WAY_S * 10):
            under_way = [ask for ask in asks if not any(ask is done for done in answered)]
            if under_way:
                break
            student.wait_for_timeout(100)
        else:
            pytest.fail(f"the student's page had no ask to the class's route under way in {ASKS_UNDER_WAY_S} s; its "
                        f"asks, all answered: {[told(ask) for ask in asks]}")
        sent_before = list(asks)
        shown = get_json(f"{base_url}/api/class?code={code}")[1]["version"]
        press_chart_key(teacher, "head")
        expect_head(teacher, 1)
        expect_head(student, 1)

        versions = [(ask, json.loads(ask.response().text()).get("version")) for ask in answered
                    if ask.failure is None and ask.response() is not None]
        brought = next(ask for ask, version in versions if version == shown + 1)  # the teacher's move
        assert any(brought is ask for ask in sent_before), (
            f"the move came by an ask sent after it, {brought.url}: the page heard it at its next poll")
