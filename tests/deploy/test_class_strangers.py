"""A class's store on a real server, tried as a stranger tries it: pages opened with ?teach=1 from one address, over
Streamlit's websocket, plain GETs of /api/class with random codes and beats, no page open, and asks that the route
holds (version=) by the thousand, and dropped.

The address is the one a proxy on loopback says (X-Forwarded-For), as deploy/nginx.conf sends it: the server
(uvicorn) takes it for the page's, which the page counts against the memory store's cap of classes per address.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import urllib.request

import pytest
import redis as redis_client

from components.caches.offered import MODEL_DIRS_ENV
from components.page.page_state import DEFAULT_MODEL_ENV
from components.server.class_openers import MAX_CLASSES_PER_ADDRESS
from components.server.class_store import STORE_ENV, new_code
from components.server.class_store_redis import RedisStore
from components.server.class_waits import MAX_HELD, MAX_HELD_PER_CLASS, WAIT_ENV
from harness.held_asks import Ask
from harness.redis import redis_server
from harness.server import APP, streamlit_server
from harness.session_client import open_session

pytestmark = pytest.mark.deploy

STRANGER, NEIGHBOUR = "203.0.113.7", "203.0.113.8"  # documentation addresses (RFC 5737)
# Random codes polled, each with a random beat: a key left per poll would show as hundreds. The flood that filled
# Redis was 2,000 polls, which made this test cost seven times the CPU, on CI's two cores, for nothing more to see.
STRANGERS = 300


def server_env(tiny_checkpoint, store: str) -> dict[str, str]:
    """The tiny checkpoint as the default model (a page's run in a few hundred ms), and the class store."""
    return {MODEL_DIRS_ENV: str(tiny_checkpoint), DEFAULT_MODEL_ENV: str(tiny_checkpoint), STORE_ENV: store}


async def open_class(base_url: str, address: str) -> tuple[str | None, list[str]]:
    """Open a page with ?teach=1 from address: the class's code if one opened, and what the page says."""
    async with open_session(base_url, {"teach": "1"}, forwarded_for=address) as page:
        query = dict(pair.split("=", 1) for pair in page.query_string.split("&") if "=" in pair)
        return query.get("class"), page.texts()


def test_one_address_opens_no_more_than_its_share_of_classes(tiny_checkpoint):
    async def visit(base_url: str) -> None:
        for _ in range(MAX_CLASSES_PER_ADDRESS):
            code, texts = await open_class(base_url, STRANGER)
            assert code is not None, texts
        code, texts = await open_class(base_url, STRANGER)
        assert code is None
        assert any("cannot be started right now" in text and "from your address" in text for text in texts), texts
        code, texts = await open_class(base_url, NEIGHBOUR)
        assert code is not None, texts

    with streamlit_server(APP, env=server_env(tiny_checkpoint, "memory")) as base_url:
        asyncio.run(visit(base_url))


def poll(base_url: str, code: str, beat: str, version: int | None = None) -> dict:
    """GET /api/class as a follower's page, or anyone, sends it: with version, an ask to wait while the class is at
    that version."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    waits = "" if version is None else f"&version={version}"
    with opener.open(f"{base_url}/api/class?code={code}&beat={beat}{waits}", timeout=30) as answer:
        return json.loads(answer.read())


@pytest.mark.needs("redis-server")
def test_random_polls_of_the_class_route_leave_no_key_in_redis(tiny_checkpoint, tmp_path):
    with redis_server(tmp_path) as redis, streamlit_server(APP, env=server_env(tiny_checkpoint, redis.url)) as url:
        store, check = RedisStore(redis.url), redis_client.Redis.from_url(redis.url)
        code, _ = store.create({"text": "the class keeps following"})
        follower = secrets.token_hex(8)
        for _ in range(STRANGERS):
            # answered at once, as a code that is no class is never held
            assert poll(url, new_code(), secrets.token_hex(8), version=1) == {"reachable": True, "version": None,
                                                                             "waited": False}
            assert poll(url, code, follower) == {"reachable": True, "version": 1}
        assert sorted(check.scan_iter()) == sorted([(RedisStore.PREFIX + code).encode(),
                                                    (RedisStore.PREFIX + code + ":followers").encode()])
        assert store.followers(code) == 1


# The held asks (components/server/class_waits.py), on a server that holds an ask until its class moves however
# long that takes: which asks are held, and which answered at once, then depends on nothing but their count.
HOLD_LONG = {WAIT_ENV: "3600"}
PROBES = 60  # asks, a second apart at most, until one is held again


async def ask_all(urls: list[str]) -> list[Ask]:
    """Send a GET to each url at once, each on its own connection, a hundred connections opening at a time."""
    asks = [Ask(url) for url in urls]
    for first in range(0, len(asks), 100):
        await asyncio.gather(*(ask.send() for ask in asks[first:first + 100]))
    return asks


async def split_answers(asks: list[Ask], count: int) -> tuple[list[dict], list[asyncio.Task]]:
    """The first count answers, checked to be all that came by then, and the asks still held, as tasks that give
    (status, answer) once answered."""
    pending = {asyncio.ensure_future(ask.answer()) for ask in asks}
    answers = []
    while len(answers) < count:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        answers += [task.result()[1] for task in done]
    assert len(answers) == count, f"{len(answers)} answered at once, not {count}"
    return answers, list(pending)


@pytest.mark.needs("redis-server")
def test_a_class_holds_no_more_asks_than_its_cap_and_the_server_no_more_than_its_own(tiny_checkpoint, tmp_path):
    async def visit(base_url: str, store: RedisStore) -> None:
        classes = [store.create({"text": f"class {index}"}) for index in range(MAX_HELD // MAX_HELD_PER_CLASS + 1)]
        code, key = classes[0]
        asks = await ask_all([f"{base_url}/api/class?code={code}&version=1"] * (MAX_HELD_PER_CLASS + 10))
        over, held = await split_answers(asks, 10)
        assert over == [{"reachable": True, "version": 1, "waited": False}] * 10
        store.publish(code, key, {"text": "the teacher moved"})  # every held ask answers with the move
        moved = await asyncio.gather(*held)
        assert moved == [(200, {"reachable": True, "version": 2, "waited": True})] * MAX_HELD_PER_CLASS

        asks = await ask_all([f"{base_url}/api/class?code={code}&version={2 if index == 0 else 1}"
                              for index, (code, _) in enumerate(classes) for _ in range(MAX_HELD_PER_CLASS)])
        over, held = await split_answers(asks, len(asks) - MAX_HELD)
        assert all(answer["waited"] is False for answer in over)
        for code, key in classes:
            assert store.end(code, key)
        ended = await asyncio.gather(*held)
        assert ended == [(200, {"reachable": True, "version": None, "waited": True})] * MAX_HELD

    with redis_server(tmp_path) as redis, streamlit_server(
            APP, env={**server_env(tiny_checkpoint, redis.url), **HOLD_LONG}) as base_url:
        asyncio.run(visit(base_url, RedisStore(redis.url)))


@pytest.mark.needs("redis-server")
def test_an_ask_whose_client_went_gives_its_place_back(tiny_checkpoint, tmp_path):
    """A class's every place held, then every client gone (a page that reran or closed): a new ask is held again.
    Without the server noticing them go, they would stay held for the whole wait (an hour here), and every new ask
    would be answered at once."""
    async def visit(base_url: str, store: RedisStore) -> None:
        code, key = store.create({"text": "the class whose followers left"})
        url = f"{base_url}/api/class?code={code}&version=1"
        asks = await ask_all([url] * (MAX_HELD_PER_CLASS + 1))
        _, held = await split_answers(asks, 1)
        for ask in asks:
            ask.drop()
        await asyncio.gather(*held, return_exceptions=True)
        for _ in range(PROBES):  # until one is held: the server notices its clients go one by one, in its own time
            probe = await Ask(url).send()
            answer = asyncio.ensure_future(probe.answer())
            done, _ = await asyncio.wait([answer], timeout=1.0)
            if not done:
                break
            assert answer.result() == (200, {"reachable": True, "version": 1, "waited": False})
        else:
            pytest.fail(f"{PROBES} asks in a row were answered at once: the asks of the clients gone are still held")
        store.publish(code, key, {"text": "the teacher moved"})
        assert await answer == (200, {"reachable": True, "version": 2, "waited": True})

    with redis_server(tmp_path) as redis, streamlit_server(
            APP, env={**server_env(tiny_checkpoint, redis.url), **HOLD_LONG}) as base_url:
        asyncio.run(visit(base_url, RedisStore(redis.url)))
