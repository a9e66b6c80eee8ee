"""The asks held until a class moves (components/server/class_waits.py), on the real stores (memory, and a real
redis-server): the versions read at once, an ask answered by the teacher's move, the end of the class, its own
bound or its client going, and the caps of asks held. The route that holds them, on a real server:
tests/deploy/test_class_strangers.py and tests/deploy/test_class_push.py.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis as redis_client

from components.server.class_store import MemoryStore, new_code
from components.server.class_store_redis import RedisStore
from components.server.class_waits import ClassWaits, NoRoom, wait_setting

HOUR_S = 3600.0  # a bound no ask below reaches: each ends by what the test does
NOTICED_S = 30.0


@pytest.fixture
def store(make_store):
    return make_store()


def run(coroutine) -> None:
    """asyncio.run in a thread of its own: a worker whose browser tests ran first keeps Playwright's event loop marked
    as running in its main thread, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, coroutine).result()


def never() -> asyncio.Future:
    """A client that stays: what until_moved awaits to learn that its client went."""
    return asyncio.get_running_loop().create_future()


def test_versions_are_read_at_once_for_live_ended_and_unknown_classes(store):
    live, key = store.create({"text": "a class"})
    ended, ended_key = store.create({"text": "a class that ends"})
    store.publish(live, key, {"text": "moved"})
    store.end(ended, ended_key)
    unknown = new_code()
    assert store.versions([live, ended, unknown]) == {live: 2, ended: None, unknown: None}


@pytest.mark.needs("redis-server")
def test_reading_versions_writes_nothing_to_redis(redis):
    store, check = RedisStore(redis.url), redis_client.Redis.from_url(redis.url)
    before = sorted(check.scan_iter())
    store.versions([new_code() for _ in range(100)])
    assert sorted(check.scan_iter()) == before


def test_a_held_ask_is_answered_by_the_teachers_move_and_by_the_end_of_the_class(store):
    code, key = store.create({"text": "a class"})
    waits = ClassWaits(store.versions, tick_s=0.05)

    async def hold() -> None:
        moved = asyncio.ensure_future(waits.until_moved(code, 1, HOUR_S, never))
        await asyncio.sleep(0.2)
        assert not moved.done()
        store.publish(code, key, {"text": "moved"})
        assert await moved == 2
        ended = asyncio.ensure_future(waits.until_moved(code, 2, HOUR_S, never))
        await asyncio.sleep(0.2)
        store.end(code, key)
        assert await ended is None
        assert waits.held() == 0

    run(hold())


def test_a_held_ask_ends_at_its_bound_or_when_its_client_goes(store):
    code, _ = store.create({"text": "a class nobody moves"})
    waits = ClassWaits(store.versions, tick_s=0.05)

    async def hold() -> None:
        assert await waits.until_moved(code, 1, 0.3, never) == 1
        gone = never()
        held = asyncio.ensure_future(waits.until_moved(code, 1, HOUR_S, lambda: gone))
        await asyncio.sleep(0.2)
        assert waits.held(code) == 1
        gone.set_result(None)
        async with asyncio.timeout(NOTICED_S):  # a bound on noticing at all, not a measure of speed
            assert await held == 1
        assert waits.held() == 0

    run(hold())


def test_past_a_cap_an_ask_is_not_held():
    store = MemoryStore()
    first, second = store.create({"text": "one"})[0], store.create({"text": "two"})[0]
    waits = ClassWaits(store.versions, per_class=2, overall=3)

    async def hold() -> None:
        held = [asyncio.ensure_future(waits.until_moved(first, 1, HOUR_S, never)) for _ in range(2)]
        await asyncio.sleep(0)
        with pytest.raises(NoRoom):
            await waits.until_moved(first, 1, HOUR_S, never)  # the class's cap
        held.append(asyncio.ensure_future(waits.until_moved(second, 1, HOUR_S, never)))
        await asyncio.sleep(0)
        with pytest.raises(NoRoom):
            await waits.until_moved(second, 1, HOUR_S, never)  # the server's
        assert waits.held() == 3
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
        assert waits.held() == 0

    run(hold())


def test_the_wait_setting_takes_seconds_in_its_range_and_refuses_the_rest():
    assert wait_setting(None) == wait_setting("") == 3.0
    assert wait_setting("1.5") == 1.5
    for typo in ("3s", "0", "-1", "nan", "86400"):
        with pytest.raises(ValueError, match="seconds from 0.1 to 3600"):
            wait_setting(typo)
