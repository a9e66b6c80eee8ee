"""The switch route's bounds (components/api/routes.py), on its own in a real HTTP server (uvicorn, as Streamlit
serves it) in this process, where the test can hold every slot of heavy work: a request for a page's ask waits at
most SWITCH_WAIT_S for a slot, then says the server is busy (429), and at most MAX_SWITCH_REQUESTS are under way at
once, the rest refused at once. Without them each request held one of the server's worker threads for as long as
the slots stayed taken."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

import pytest
import uvicorn
from starlette.applications import Starlette

from components.api import routes
from components.caches import work
from components.server.switch_asks import ASKS
from harness.server import free_port, get_json, wait_for


@pytest.fixture(scope="module")
def route_url():
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes.routes()), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for(lambda: server.started, "the route's server to start")
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def every_heavy_slot_held():
    """Threads that hold every slot of heavy work until the test ends."""
    release, holding = threading.Event(), threading.Semaphore(0)

    def hold() -> None:
        with work.heavy_work():
            holding.release()
            release.wait(60)

    holders = [threading.Thread(target=hold) for _ in range(work.HEAVY_SLOTS)]
    for holder in holders:
        holder.start()
    for _ in holders:
        assert holding.acquire(timeout=30)
    yield
    release.set()
    for holder in holders:
        holder.join(30)


def ask_url(base: str, off: str = "1:3") -> str:
    ask = ASKS.register({"model": "a model no page of this process loaded", "text": "a", "second": "b"})
    return f"{base}/api/switch?{urlencode({'ask': ask, 'off': off})}"


def test_with_every_slot_taken_each_request_is_told_the_server_is_busy(route_url, every_heavy_slot_held):
    count = 3 * routes.MAX_SWITCH_REQUESTS
    with ThreadPoolExecutor(count) as pool:
        answers = list(pool.map(get_json, [ask_url(route_url) for _ in range(count)]))
    assert {status for status, _ in answers} == {429}, answers
    assert all(body["error"].startswith("the server is busy") for _, body in answers)


def test_with_a_slot_free_the_same_request_is_answered(route_url):
    status, body = get_json(ask_url(route_url))
    assert status == 400 and body == {"error": "not a model this server has loaded"}
