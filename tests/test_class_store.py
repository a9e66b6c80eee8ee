"""The class store (components/classroom/class_store.py): in memory and in a real redis-server, the same behaviour.

What a class holds, who may change it (the key, and nothing like it), how it ends, how followers are
counted, two teachers' tabs, and Redis that stops answering: the store says so within its timeout.
"""

from __future__ import annotations

import time

import pytest

from components.classroom.class_store import (
    CODE_ALPHABET,
    CODE_LENGTH,
    HEARTBEAT_S,
    MemoryStore,
    RedisStore,
    StoreUnavailable,
    from_setting,
    key_hash,
    key_matches,
    new_key,
    parse_code,
)
from harness.redis import redis_server
from tests.marks import NEEDS_REDIS

VIEW = {"text": "time flies like an arrow", "layer": "2", "head": "5"}


@pytest.fixture(scope="module")
def redis(tmp_path_factory):
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(params=["memory", pytest.param("redis", marks=NEEDS_REDIS)])
def make_store(request):
    """A factory of fresh stores of one kind: make_store(lifetime_s=...)."""
    if request.param == "memory":
        return lambda **options: MemoryStore(**options)
    server = request.getfixturevalue("redis")
    return lambda **options: RedisStore(server.url, **options)


def test_a_class_holds_the_teachers_view_and_its_version_moves_with_each_change(make_store):
    store = make_store()
    code, key = store.create(VIEW)
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    first = store.read(code)
    assert first.settings == VIEW
    assert store.publish(code, key, {**VIEW, "head": "6"})
    assert store.version(code) == first.version + 1
    assert store.read(code).settings == {**VIEW, "head": "6"}


def test_only_the_key_drives_the_class(make_store):
    store = make_store()
    code, key = store.create(VIEW)
    other_code, other_key = store.create(VIEW)
    for wrong in ("", "x", key[:-1], key + "a", key.upper() if key != key.upper() else key.lower(), other_key,
                  "<b>" * 8, key + "\n"):
        assert not store.teaches(code, wrong), wrong
        assert not store.publish(code, wrong, {"head": "9"}), wrong
        assert not store.end(code, wrong), wrong
    assert store.read(code).settings == VIEW
    assert store.teaches(code, key) and not store.teaches(other_code, key)


def test_two_teacher_tabs_with_one_key_the_later_change_wins(make_store):
    store = make_store()
    code, key = store.create(VIEW)
    assert store.publish(code, key, {**VIEW, "head": "1"})
    assert store.publish(code, key, {**VIEW, "head": "2"})
    assert store.read(code).settings["head"] == "2"


def test_an_ended_or_unknown_class_is_gone_for_everyone(make_store):
    store = make_store()
    code, key = store.create(VIEW)
    assert store.end(code, key)
    assert store.read(code) is None and store.version(code) is None
    assert not store.publish(code, key, VIEW) and not store.teaches(code, key)
    assert store.read("ZZZZZZ") is None and store.followers("ZZZZZZ") == 0


def test_a_class_without_a_teachers_change_ends_after_its_lifetime(make_store):
    store = make_store(lifetime_s=0.3)
    code, key = store.create(VIEW)
    time.sleep(0.2)
    assert store.publish(code, key, VIEW)  # a change: the lifetime starts again
    time.sleep(0.2)
    assert store.read(code) is not None
    time.sleep(0.3)
    assert store.read(code) is None and not store.publish(code, key, VIEW)


def test_followers_are_counted_while_they_poll(make_store):
    store = make_store()
    code, _ = store.create(VIEW)
    for follower in ("a", "b", "c"):
        store.version(code, follower)
    store.version(code, "a")  # one student polling twice is one follower
    store.version(code)  # a page exploring on its own is not following
    assert store.followers(code) == 3
    time.sleep(HEARTBEAT_S + 0.2)
    store.version(code, "b")
    assert store.followers(code) == 1


def test_codes_from_links_are_checked_before_use():
    assert parse_code(" abcdef ") == "ABCDEF"
    for bad in ("", "ABCDE", "ABCDEFG", "ABCDE0", "ABCDEI", "<scrip", "ABC DE", "ÄBCDEF"):
        assert parse_code(bad) is None, bad


def test_keys_are_long_random_secrets_and_compared_by_hash():
    keys = {new_key() for _ in range(100)}
    assert len(keys) == 100 and min(len(key) for key in keys) >= 22  # 128 bits and more in base64
    key = keys.pop()
    assert key_matches(key, key_hash(key)) and not key_matches(keys.pop(), key_hash(key))


def test_the_setting_names_the_store():
    assert isinstance(from_setting(""), MemoryStore) and isinstance(from_setting("memory"), MemoryStore)
    with pytest.raises(ValueError, match="redis://"):
        from_setting("postgres://db")


@pytest.mark.needs("redis-server")
def test_redis_that_stops_answering_is_said_within_the_timeout_and_comes_back(tmp_path):
    with redis_server(tmp_path) as server:
        store = RedisStore(server.url)
        code, key = store.create(VIEW)
        server.pause()
        try:
            # Without the client's timeout each call would wait for ever on the paused server: raising is the proof.
            for call in (lambda: store.version(code, "a"), lambda: store.publish(code, key, VIEW),
                         lambda: store.create(VIEW)):
                with pytest.raises(StoreUnavailable):
                    call()
        finally:
            server.resume()
        assert store.publish(code, key, {**VIEW, "head": "7"}) and store.read(code).settings["head"] == "7"


def test_redis_that_is_not_there_is_said_at_once():
    store = RedisStore("redis://127.0.0.1:9/0")
    with pytest.raises(StoreUnavailable):
        store.read("ABCDEF")
