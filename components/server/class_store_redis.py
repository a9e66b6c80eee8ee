"""The classes in Redis (ATTENTION_ANATOMY_CLASS_STORE=redis://…), shared by replicas behind a proxy: the same
interface as class_store.MemoryStore, each write to a class a Lua script that Redis runs whole; and from_setting,
which picks one of the two as the server's setting says. No Streamlit."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

from components.server.class_store import (
    HEARTBEAT_S,
    LIFETIME_S,
    MAX_FOLLOWERS,
    REDIS_TIMEOUT_S,
    STORE_ENV,
    STORE_SETTING_FORMS,
    ClassStore,
    MemoryStore,
    Snapshot,
    StoreSettingError,
    StoreUnavailable,
    key_hash,
    key_matches,
    new_code,
    new_key,
)


def from_setting(value: str | None) -> ClassStore:
    """The store ATTENTION_ANATOMY_CLASS_STORE names: empty or "memory" for this process, redis://… for Redis."""
    value = (value or "").strip()
    if value in ("", "memory"):
        return MemoryStore()
    if value.startswith(("redis://", "rediss://", "unix://")):
        try:
            return RedisStore(value)
        except ValueError as error:  # redis-py's: a port that is no number, an option it does not know
            raise StoreSettingError(f"{STORE_ENV} is not a Redis URL redis-py can read: {error}") from error
    raise StoreSettingError(f"{STORE_ENV} must be {STORE_SETTING_FORMS}, not {value[:40]!r}")


# Each write to a class is one of these scripts, which Redis runs whole, with nothing in between: a class is
# written with its expiry or not at all, and a write checked against the teacher's key goes ahead only if the
# class still holds the key hash the store checked (in constant time, in Python). Otherwise an End from another
# tab, or the expiry, landing between the check and the write would bring back a class without its key hash,
# which followers poll for its whole lifetime without ever reading that it ended.
# KEYS[1] the class's hash; ARGV key hash, settings (JSON), changed (Unix time), lifetime in ms.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'key_hash', ARGV[1], 'version', 1, 'settings', ARGV[2], 'changed', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""
# KEYS[1] the class's hash; ARGV the key hash checked, settings (JSON), changed (Unix time), lifetime in ms.
_PUBLISH = """
if redis.call('HGET', KEYS[1], 'key_hash') ~= ARGV[1] then return 0 end
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'settings', ARGV[2], 'changed', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""
# A follower's poll with its heartbeat: nothing is written unless the class exists, so that a stranger's codes leave
# no key; the follower is counted if it already was or if fewer than the cap count (heartbeats too old to count are
# not counted, then dropped). The followers' set lasts as long as a heartbeat counts, never longer than the class: a
# class that ends by expiry leaves no followers behind. The cap compares absolute times (PEXPIRETIME): a PTTL
# turned back into a PEXPIRE could land a millisecond after the class's end (TIME in the script costs Redis ~50 KB).
# The heartbeat is the script's first write, with pcall: when Redis is full (its maxmemory, with noeviction) it
# refuses it, and the follower still reads the version. (Redis checks its memory at a script's first write only:
# written later, the heartbeat would grow a full Redis.)
# KEYS[1] the class's hash, KEYS[2] its followers; ARGV the follower, now (Unix time), heartbeat s, cap of followers.
_VERSION = """
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return false end
local now, heartbeat_s = tonumber(ARGV[2]), tonumber(ARGV[3])
local since = now - heartbeat_s
local counted = redis.call('ZSCORE', KEYS[2], ARGV[1])
if counted or redis.call('ZCOUNT', KEYS[2], '(' .. since, '+inf') < tonumber(ARGV[4]) then
  local added = redis.pcall('ZADD', KEYS[2], now, ARGV[1])
  if type(added) == 'number' then
    redis.call('PEXPIRE', KEYS[2], math.ceil(heartbeat_s * 1000))
    local class_at = redis.call('PEXPIRETIME', KEYS[1])
    if class_at > 0 and class_at < redis.call('PEXPIRETIME', KEYS[2]) then
      redis.call('PEXPIREAT', KEYS[2], class_at)
    end
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', since)
return version
"""
# KEYS[1] the class's hash, KEYS[2] its followers; ARGV[1] the key hash checked.
_END = """
if redis.call('HGET', KEYS[1], 'key_hash') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
"""


class RedisStore:
    """The classes in Redis, for every replica: a hash per class (key_hash, version, settings, changed) that
    expires LIFETIME_S after the teacher's last change, and a sorted set of the followers' heartbeats, which expires
    HEARTBEAT_S after the last one. No count by address: Redis's own maxmemory bounds what it holds, and with
    noeviction (deploy/kubernetes.yaml) a full Redis refuses new classes and keeps the ones it has."""

    PREFIX = "attention-anatomy:class:"

    def __init__(self, url: str, lifetime_s: float = LIFETIME_S) -> None:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.lifetime_ms = int(lifetime_s * 1000)
        self._errors = (redis.RedisError, OSError)
        # No retries: a page waits one timeout for a Redis that is down, not four.
        self._redis = redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_S,
                                           socket_connect_timeout=REDIS_TIMEOUT_S, retry=Retry(NoBackoff(), 0))
        self._create_script = self._redis.register_script(_CREATE)
        self._publish_script = self._redis.register_script(_PUBLISH)
        self._end_script = self._redis.register_script(_END)
        self._version_script = self._redis.register_script(_VERSION)

    def create(self, settings: dict[str, str], address: object = None) -> tuple[str, str]:
        key = new_key()
        with self._reaching():
            code = new_code()
            while not self._create_script([self._name(code)], [key_hash(key), *self._view_arguments(settings)]):
                code = new_code()
        return code, key

    def version(self, code: str, follower: str | None = None) -> int | None:
        with self._reaching():
            if follower is None:
                version = self._redis.hget(self._name(code), "version")
            else:  # the heartbeat rides along in the same round trip
                version = self._version_script([self._name(code), self._followers(code)],
                                               [follower, time.time(), HEARTBEAT_S, MAX_FOLLOWERS])
        return None if version is None else int(version)

    def versions(self, codes: list[str]) -> dict[str, int | None]:
        with self._reaching():  # one round trip for them all
            pipe = self._redis.pipeline(transaction=False)
            for code in codes:
                pipe.hget(self._name(code), "version")
            found = pipe.execute()
        return {code: None if version is None else int(version) for code, version in zip(codes, found, strict=True)}

    def read(self, code: str) -> Snapshot | None:
        with self._reaching():
            fields = self._redis.hmget(self._name(code), ["key_hash", "version", "settings"])
        if None in fields:
            return None
        return Snapshot(int(fields[1]), json.loads(fields[2]))

    def teaches(self, code: str, key: str) -> bool:
        with self._reaching():
            return self._teachers_hash(code, key) is not None

    def publish(self, code: str, key: str, settings: dict[str, str]) -> bool:
        with self._reaching():
            checked = self._teachers_hash(code, key)
            if checked is None:
                return False
            return bool(self._publish_script([self._name(code)], [checked, *self._view_arguments(settings)]))

    def end(self, code: str, key: str) -> bool:
        with self._reaching():
            checked = self._teachers_hash(code, key)
            if checked is None:
                return False
            return bool(self._end_script([self._name(code), self._followers(code)], [checked]))

    def followers(self, code: str) -> int:
        with self._reaching():
            pipe = self._redis.pipeline(transaction=False)
            pipe.zremrangebyscore(self._followers(code), "-inf", time.time() - HEARTBEAT_S)
            pipe.zcard(self._followers(code))
            return int(pipe.execute()[1])

    def _teachers_hash(self, code: str, key: str) -> bytes | None:
        """The class's stored key hash when key is its teacher's (checked here, in constant time), else None."""
        stored = self._redis.hget(self._name(code), "key_hash")
        return stored if stored is not None and key_matches(key, stored) else None

    def _view_arguments(self, settings: dict[str, str]) -> list[str | int | float]:
        """The scripts' arguments after the key hash: the teacher's view, when it changed, and the lifetime."""
        return [json.dumps(settings), time.time(), self.lifetime_ms]

    @contextlib.contextmanager
    def _reaching(self) -> Iterator[None]:
        """Turns the Redis client's errors (and a socket's) into StoreUnavailable, for the page to say so."""
        try:
            yield
        except self._errors as error:
            raise StoreUnavailable(f"the class store (Redis) cannot be reached: {error}") from error

    def _name(self, code: str) -> str:
        return self.PREFIX + code

    def _followers(self, code: str) -> str:
        return self.PREFIX + code + ":followers"

