"""The class store (components/server/class_store.py): in memory and in a real redis-server, the same behaviour.

What a class holds, who may change it (the key, and nothing like it; the store keeps only its hash), how it ends,
how followers are counted, two teachers' tabs, an End or an expiry landing in the middle of a teacher's change
(forced to land there), and Redis that stops answering: the store says so within its timeout. What strangers'
polls leave behind: tests/classroom/test_class_store_strangers.py.
"""

from __future__ import annotations

import base64
import contextlib
import time
from collections.abc import Iterator

import pytest
import redis as redis_client

from components.server import class_store, class_store_redis
from components.server.class_store import (
    CODE_ALPHABET,
    CODE_LENGTH,
    HEARTBEAT_S,
    REDIS_TIMEOUT_S,
    MemoryStore,
    StoreSettingError,
    StoreUnavailable,
    key_hash,
    key_matches,
    new_key,
    parse_code,
)
from components.server.class_store_redis import RedisStore, from_setting
from harness.redis import redis_server

VIEW = {"text": "time flies like an arrow", "layer": "2", "head": "5"}
# What a shared, busy machine may add to a call that gives up after the store's timeout: a bound on giving up
# at all, not a measure of speed.
BUSY_MACHINE_S = 2.0


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
    # Each step 0.6 of a lifetime after the one before: 0.4 of a lifetime (0.6 s) to spare for a busy machine, where
    # a lifetime of 0.3 s left 0.1 s, and a worker of the suite's first minutes, under load, took longer (a CI sim).
    lifetime_s = 1.5
    store = make_store(lifetime_s=lifetime_s)
    code, key = store.create(VIEW)
    time.sleep(0.6 * lifetime_s)
    assert store.publish(code, key, VIEW)  # a change: the lifetime starts again
    time.sleep(0.6 * lifetime_s)
    assert store.read(code) is not None  # 1.2 lifetimes after it began: the change made it last
    time.sleep(0.6 * lifetime_s)
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


def held_values(thing, seen=None) -> Iterator[str | bytes]:
    """Every string and bytes a store's object holds, however deep: in its attributes, dicts, lists and sets."""
    seen = {} if seen is None else seen  # by id, each kept alive until the walk ends: no id is reused meanwhile
    if id(thing) in seen:
        return
    seen[id(thing)] = thing
    if isinstance(thing, str | bytes):
        yield thing
    elif isinstance(thing, dict):
        for pair in thing.items():
            yield from held_values(pair, seen)
    elif isinstance(thing, list | tuple | set | frozenset):
        for item in thing:
            yield from held_values(item, seen)
    elif hasattr(thing, "__dict__"):
        yield from held_values(vars(thing), seen)


def redis_values(url: str) -> Iterator[bytes]:
    """Every key, field and value the Redis at url holds."""
    client = redis_client.Redis.from_url(url)
    for name in client.scan_iter():
        yield name
        kind = client.type(name)
        if kind == b"hash":
            yield from (part for pair in client.hgetall(name).items() for part in pair)
        elif kind == b"zset":
            yield from client.zrange(name, 0, -1)
        else:
            yield client.dump(name)


def test_the_store_keeps_only_a_hash_of_the_teachers_key(make_store, request):
    store = make_store()
    code, key = store.create(VIEW)
    store.publish(code, key, {**VIEW, "head": "1"})
    store.version(code, "0123456789abcdef")
    if isinstance(store, RedisStore):
        held = list(redis_values(request.getfixturevalue("redis").url))
    else:
        held = list(held_values(store))
    assert key_hash(key) in held  # what it keeps instead, to check a key against
    assert not [value for value in held if key.encode() in (value if isinstance(value, bytes) else value.encode())]
    assert store.teaches(code, key) and store.publish(code, key, VIEW)  # the key still opens the class


def test_keys_cannot_be_guessed_from_one_another():
    """Each key is a fresh random secret of 128 bits or more: no two alike, none derived from another."""
    keys = [new_key() for _ in range(1000)]
    assert len(set(keys)) == len(keys)
    assert min(len(base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))) for key in keys) * 8 >= 128
    assert len({key[:8] for key in keys}) == len(keys)  # not one long prefix with a counter behind it
    assert key_matches(keys[0], key_hash(keys[0])) and not key_matches(keys[1], key_hash(keys[0]))


def test_the_setting_names_the_store():
    assert isinstance(from_setting(""), MemoryStore) and isinstance(from_setting("memory"), MemoryStore)
    assert isinstance(from_setting("redis://localhost:6379/0"), RedisStore)  # not reached before its first call
    for mistyped in ("postgres://db", "redis:/localhost", "memcached://x"):
        with pytest.raises(StoreSettingError, match="redis://host:6379/0"):
            from_setting(mistyped)
    with pytest.raises(StoreSettingError, match="Port"):  # redis-py's own words, under the setting's name
        from_setting("redis://localhost:6379x/0")


@pytest.mark.needs("redis-server")
def test_redis_that_stops_answering_is_said_within_the_timeout_and_comes_back(tmp_path):
    with redis_server(tmp_path) as server:
        store = RedisStore(server.url)
        code, key = store.create(VIEW)
        server.pause()
        try:
            # Without the client's timeout each call would wait for ever on the paused server.
            calls = {"a follower's poll": lambda: store.version(code, "a"),
                     "a teacher's change": lambda: store.publish(code, key, VIEW),
                     "a new class": lambda: store.create(VIEW)}
            for call, make in calls.items():
                started = time.monotonic()
                with pytest.raises(StoreUnavailable):
                    make()
                waited = time.monotonic() - started
                assert waited < REDIS_TIMEOUT_S + BUSY_MACHINE_S, f"{call} gave up after {waited:.1f} s"
        finally:
            server.resume()
        assert store.publish(code, key, {**VIEW, "head": "7"}) and store.read(code).settings["head"] == "7"


def between_check_and_write(monkeypatch, meanwhile) -> list:
    """Run meanwhile once, when the store next checks a key against the class's stored key hash: after it read
    the class and before it writes it. The list it returns is empty once meanwhile has run."""
    check = class_store.key_matches
    pending = [meanwhile]

    def checking(key: str, stored_hash: bytes) -> bool:
        if pending:
            pending.pop()()
        return check(key, stored_hash)

    monkeypatch.setattr(class_store_redis, "key_matches", checking)
    return pending


def expire_now(url: str, name: str) -> None:
    """Let the record named name reach its expiry now, as Redis would LIFETIME_S after the last change."""
    client = redis_client.Redis.from_url(url)
    client.pexpire(name, 1)
    while client.exists(name):
        time.sleep(0.001)


@pytest.mark.needs("redis-server")
@pytest.mark.parametrize("meanwhile", ["ended in another tab", "expired"])
def test_a_class_that_ends_while_its_teacher_publishes_stays_ended(redis, monkeypatch, meanwhile):
    store, other_tab = RedisStore(redis.url), RedisStore(redis.url)
    code, key = store.create(VIEW)
    ends = {"ended in another tab": lambda: other_tab.end(code, key),
            "expired": lambda: expire_now(redis.url, RedisStore.PREFIX + code)}
    pending = between_check_and_write(monkeypatch, ends[meanwhile])
    assert not store.publish(code, key, {**VIEW, "head": "6"})
    assert not pending
    assert store.version(code) is None and store.read(code) is None  # what followers poll: the class has ended


@pytest.mark.needs("redis-server")
def test_an_end_overtaken_by_another_tab_leaves_a_class_opened_since_under_its_code(redis, monkeypatch):
    store, other_tab = RedisStore(redis.url), RedisStore(redis.url)
    code, key = store.create(VIEW)

    def end_and_reopen() -> None:
        other_tab.end(code, key)
        monkeypatch.setattr(class_store_redis, "new_code", lambda: code)  # the code comes round again
        other_tab.create({**VIEW, "head": "9"})

    pending = between_check_and_write(monkeypatch, end_and_reopen)
    assert not store.end(code, key)
    assert not pending
    assert store.read(code).settings["head"] == "9"


@pytest.mark.needs("redis-server")
def test_a_class_is_created_with_its_expiry_or_not_at_all(tmp_path, monkeypatch):
    """Whatever the store sends after its first command is lost (the link to Redis broke): no class is left
    that would never end."""
    with redis_server(tmp_path) as server:
        store, check = RedisStore(server.url), redis_client.Redis.from_url(server.url)
        store.read("ZZZZZZ")  # the store's connection is open: only its commands for the class are counted
        real_send = redis_client.connection.Connection.send_packed_command
        sent = []

        def link_breaks_after_one_command(connection, command, *args, **kwargs):
            if sent:
                raise redis_client.ConnectionError("the link to Redis broke")
            sent.append(command)
            return real_send(connection, command, *args, **kwargs)

        with monkeypatch.context() as broken:
            broken.setattr(redis_client.connection.Connection, "send_packed_command", link_breaks_after_one_command)
            with contextlib.suppress(StoreUnavailable):
                store.create(VIEW)
        classes = check.keys(RedisStore.PREFIX + "*")
        assert all(check.pttl(name) > 0 for name in classes), {name: check.pttl(name) for name in classes}
        created, _ = store.create(VIEW)
        assert check.pttl(RedisStore.PREFIX + created) > 0


def test_redis_that_is_not_there_is_said_at_once():
    store = RedisStore("redis://127.0.0.1:9/0")
    with pytest.raises(StoreUnavailable):
        store.read("ABCDEF")
