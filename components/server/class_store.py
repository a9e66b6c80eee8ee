"""Where a class lives: the teacher's page writes its view into it, the students' pages read it. No Streamlit.

A class is a short code (read off a projector), the SHA-256 of the teacher's key, a version number that
grows with every change the teacher makes, the teacher's view as plain strings (the URL parameters the
page writes) and, beside it, the followers' last heartbeats, to count them (at most MAX_FOLLOWERS). Nothing
else: no names, no addresses. (The memory store keeps beside each class a hash of the network the teacher's page
came from, keyed with a secret of the process, to count a client's classes: it cannot be turned back into the
address; classroom/class_openers.py.) A class ends when its teacher ends it or LIFETIME_S after its last change.

Nothing a stranger sends is kept: a poll for a code that is no live class, with or without a heartbeat, writes
nothing, and a class counts at most MAX_FOLLOWERS heartbeats however many ids are sent for it.

Two stores behind one interface: MemoryStore (the sessions of one server process) and RedisStore
(class_store_redis.py, with from_setting, which picks one as ATTENTION_ANATOMY_CLASS_STORE says: redis://… for
replicas behind a proxy). A follower's poll reads the version only (and leaves its heartbeat in the same step, a
script in Redis); the view is read when it moved. In Redis, each write to a class is a script that Redis runs
whole, so that no End or expiry lands inside it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from components.server.class_openers import MAX_CLASSES_PER_ADDRESS, opener

STORE_ENV = "ATTENTION_ANATOMY_CLASS_STORE"
# No 0/O, 1/I/L: a code is read off a wall and typed. 31**6 is about 890 million codes.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
_CODE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")
KEY_BYTES = 24  # 192 bits of secrets.token_urlsafe: at least the 128 the issue asks for
_KEY = re.compile(r"[A-Za-z0-9_-]{22,64}")
LIFETIME_S = 3 * 3600.0  # a class without a change from its teacher for this long has ended
HEARTBEAT_S = 5.0  # a follower counts while its last poll is younger than this
# Followers a class counts at once: a lecture hall and more. Heartbeats past it are not kept (the poll still reads
# the version), so that random ids sent for a class neither grow its record nor push the count beyond this.
MAX_FOLLOWERS = 500
MAX_CLASSES = 10_000  # of one memory store: a page opened with ?teach=1 in a loop cannot fill the server
REDIS_TIMEOUT_S = 0.5  # Redis down: a page waits at most this long for it, then says so and goes on


# What ATTENTION_ANATOMY_CLASS_STORE may be, for the error and the page's notice.
STORE_SETTING_FORMS = "empty, 'memory', or a Redis URL (redis://host:6379/0)"


class StoreUnavailable(RuntimeError):
    """The store cannot be reached (Redis down), or holds all the classes it may (the memory store, for the server
    or for the address of the page that opens one): the page says so, with this error's words, and goes on."""


class StoreSettingError(ValueError):
    """ATTENTION_ANATOMY_CLASS_STORE names no store (a typo in the server's setting): the class features are off."""


@dataclass(frozen=True)
class Snapshot:
    """What a follower reads of a class: the teacher's view and its version."""

    version: int
    settings: dict[str, str]


class ClassStore(Protocol):
    def create(self, settings: dict[str, str], address: object = None) -> tuple[str, str]:
        """Open a class showing settings for a page at address (st.context.ip_address: counted, never kept);
        return its code and the teacher's key."""

    def version(self, code: str, follower: str | None = None) -> int | None:
        """The class's version (None once it has ended or never was); counts follower as following if it is a
        live class (and one of its MAX_FOLLOWERS); for any other code, writes nothing."""

    def versions(self, codes: list[str]) -> dict[str, int | None]:
        """Each class's version (None once it has ended or never was), all read at once and nothing written: what
        the followers' held asks wait on (components/server/class_waits.py)."""

    def read(self, code: str) -> Snapshot | None: ...

    def teaches(self, code: str, key: str) -> bool:
        """Whether key is the teacher's of this live class."""

    def publish(self, code: str, key: str, settings: dict[str, str]) -> bool:
        """Show settings to the class if key is its teacher's; False for a wrong key or an ended class."""

    def end(self, code: str, key: str) -> bool: ...

    def followers(self, code: str) -> int: ...


def parse_code(raw: str) -> str | None:
    """A class code from a link (any case, spaces around it), or None when it cannot be one."""
    code = raw.strip().upper()
    return code if _CODE.fullmatch(code) else None


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_key() -> str:
    return secrets.token_urlsafe(KEY_BYTES)


def key_hash(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def key_matches(key: str, stored_hash: bytes) -> bool:
    """Whether key is the teacher's: hashes compared in constant time; a malformed key never matches."""
    return bool(_KEY.fullmatch(key)) and hmac.compare_digest(key_hash(key), stored_hash)


@dataclass
class _Class:
    key_hash: bytes
    settings: dict[str, str]
    changed: float
    version: int = 1
    followers: dict[str, float] = field(default_factory=dict)  # a follower's id -> its last heartbeat
    opener: bytes | None = None  # class_openers.opener of the teacher's page's address


class MemoryStore:
    """The classes of one server process, under one lock; each call takes microseconds. At most MAX_CLASSES, of
    which MAX_CLASSES_PER_ADDRESS opened from one address (class_openers.py), each counting MAX_FOLLOWERS."""

    def __init__(self, lifetime_s: float = LIFETIME_S) -> None:
        self.lifetime_s = lifetime_s
        self._classes: dict[str, _Class] = {}
        self._opened: Counter[bytes] = Counter()  # live classes by opener
        self._lock = threading.Lock()

    def create(self, settings: dict[str, str], address: object = None) -> tuple[str, str]:
        key, by = new_key(), opener(address)
        with self._lock:
            self._drop_ended()
            if len(self._classes) >= MAX_CLASSES:
                raise StoreUnavailable(f"this server already holds {MAX_CLASSES:,} classes")
            if by is not None and self._opened[by] >= MAX_CLASSES_PER_ADDRESS:
                raise StoreUnavailable(
                    f"{MAX_CLASSES_PER_ADDRESS} classes are open from your address on this server: end one, or wait "
                    f"until one ends by itself, {self.lifetime_s / 3600:g} hours after its last change")
            code = new_code()
            while code in self._classes:
                code = new_code()
            self._classes[code] = _Class(key_hash(key), dict(settings), time.monotonic(), opener=by)
            if by is not None:
                self._opened[by] += 1
        return code, key

    def version(self, code: str, follower: str | None = None) -> int | None:
        with self._lock:
            lesson = self._live(code)
            if lesson is None:
                return None
            if follower is not None:
                _beat(lesson, follower, time.monotonic())
            return lesson.version

    def versions(self, codes: list[str]) -> dict[str, int | None]:
        with self._lock:
            return {code: None if (lesson := self._live(code)) is None else lesson.version for code in codes}

    def read(self, code: str) -> Snapshot | None:
        with self._lock:
            lesson = self._live(code)
            return None if lesson is None else Snapshot(lesson.version, dict(lesson.settings))

    def teaches(self, code: str, key: str) -> bool:
        with self._lock:
            lesson = self._live(code)
            return lesson is not None and key_matches(key, lesson.key_hash)

    def publish(self, code: str, key: str, settings: dict[str, str]) -> bool:
        with self._lock:
            lesson = self._live(code)
            if lesson is None or not key_matches(key, lesson.key_hash):
                return False
            lesson.settings, lesson.changed = dict(settings), time.monotonic()
            lesson.version += 1
            return True

    def end(self, code: str, key: str) -> bool:
        with self._lock:
            lesson = self._live(code)
            if lesson is None or not key_matches(key, lesson.key_hash):
                return False
            self._forget(code)
            return True

    def followers(self, code: str) -> int:
        with self._lock:
            lesson = self._live(code)
            if lesson is None:
                return 0
            _drop_stale(lesson, time.monotonic())
            return len(lesson.followers)

    def _live(self, code: str) -> _Class | None:
        lesson = self._classes.get(code)
        if lesson is not None and time.monotonic() - lesson.changed > self.lifetime_s:
            self._forget(code)
            return None
        return lesson

    def _forget(self, code: str) -> None:
        """Drop a class, and its count against its opener."""
        by = self._classes.pop(code).opener
        if by is not None:
            self._opened[by] -= 1
            if not self._opened[by]:
                del self._opened[by]

    def _drop_ended(self) -> None:
        for code in list(self._classes):
            self._live(code)


def _beat(lesson: _Class, follower: str, now: float) -> None:
    """Count follower as following at now: a follower already counted always, a new one only under MAX_FOLLOWERS
    (once the heartbeats too old to count are dropped)."""
    if follower not in lesson.followers and len(lesson.followers) >= MAX_FOLLOWERS:
        _drop_stale(lesson, now)
    if follower in lesson.followers or len(lesson.followers) < MAX_FOLLOWERS:
        lesson.followers[follower] = now


def _drop_stale(lesson: _Class, now: float) -> None:
    since = now - HEARTBEAT_S
    lesson.followers = {who: at for who, at in lesson.followers.items() if at > since}
