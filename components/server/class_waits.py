"""Followers' asks held until their class moves: a follower's page asks the App's route /api/class for the class's
version with the version it shows, and the route holds the ask until the class moves on from it, it ends, or
WAIT_S passes (components/api/routes.py). The teacher's move then reaches the page within a TICK_S, where a poll
every POLL_S heard of it up to POLL_S later (bench/class_follow.py), and an idle follower asks once a WAIT_S.

One watch per server process, on its event loop, reads the version of every class that has asks held, all at once
(ClassStore.versions: one Redis round trip, or a dictionary under the memory store's lock), every TICK_S while any
ask is held, and answers the asks whose class moved. The same for both stores: a publish on another replica is in
Redis, and is read there at the next tick. (Redis's pub/sub would tell a replica sooner, by a tick at most, but
needs a connection of its own per replica, kept open and reopened, and a message sent while it reconnects is lost:
a poll of Redis would be needed beside it in any case. The watch's reads cost one round trip a tick per replica,
however many followers wait.)

Bounded for strangers: at most MAX_HELD_PER_CLASS asks held for one class and MAX_HELD for the process (past
either, the ask is answered at once, and the page asks again after its poll period, as before); an ask is held
WAIT_S at most, and ends as soon as its client goes. The route holds an ask only for a live class at the version
asked for: any other code is answered at once and leaves nothing here.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.concurrency import run_in_threadpool

from components.server.class_store import MAX_FOLLOWERS, StoreUnavailable

log = logging.getLogger(__name__)

WAIT_ENV = "ATTENTION_ANATOMY_CLASS_WAIT_S"
WAIT_S_RANGE = (0.1, 3600.0)
TICK_S = 0.1  # how often the watch reads the versions of the classes waited on: what a move waits at most here
MAX_HELD_PER_CLASS = MAX_FOLLOWERS  # a lecture hall, each page holding one ask
MAX_HELD = 2_000  # asks held at once in the process: each an open connection and a few KB


def wait_setting(value: str | None) -> float:
    """WAIT_ENV's seconds (3 when empty); ValueError, saying the range, for anything else, so that the server does
    not start on a typo."""
    if not (value or "").strip():
        return 3.0
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not WAIT_S_RANGE[0] <= seconds <= WAIT_S_RANGE[1]:
        raise ValueError(f"{WAIT_ENV} must be seconds from {WAIT_S_RANGE[0]:g} to {WAIT_S_RANGE[1]:g}, not {value!r}")
    return seconds


# How long an ask is held at most: the page then asks again, and its ask says the follower is there
# (class_store.HEARTBEAT_S, 5 s: a follower must ask within it to stay counted). A proxy in front must wait longer
# than this for an answer (nginx's proxy_read_timeout: 60 s by default).
WAIT_S = wait_setting(os.environ.get(WAIT_ENV))


class NoRoom(RuntimeError):
    """The class, or the server, holds all the asks it may: the ask is answered at once."""


@dataclass(eq=False)
class _Held:
    version: int
    answer: asyncio.Future = field(repr=False)


class ClassWaits:
    """The asks held by one process, and the watch that answers them; used from the event loop only."""

    def __init__(self, read_versions: Callable[[list[str]], dict[str, int | None]], tick_s: float = TICK_S,
                 per_class: int = MAX_HELD_PER_CLASS, overall: int = MAX_HELD) -> None:
        self._read_versions = read_versions  # blocking (a Redis round trip): run in a worker thread
        self.tick_s, self.per_class, self.overall = tick_s, per_class, overall
        self._held: dict[str, set[_Held]] = {}
        self._count = 0
        self._watch: asyncio.Task | None = None

    def held(self, code: str | None = None) -> int:
        """Asks held now, for code or for every class."""
        return self._count if code is None else len(self._held.get(code, ()))

    async def until_moved(self, code: str, version: int, timeout_s: float, gone: Callable[[], Awaitable[object]]
                          ) -> int | None:
        """The class's version once it is no longer version (None: it ended), or version after timeout_s or once
        gone() (the client went) completes. Raises NoRoom when the class or the process holds all it may, and
        StoreUnavailable when the store stops answering meanwhile."""
        if self._count >= self.overall or self.held(code) >= self.per_class:
            raise NoRoom(f"{self.held(code)} asks held for this class, {self._count} in all")
        held = _Held(version, asyncio.get_running_loop().create_future())
        self._held.setdefault(code, set()).add(held)
        self._count += 1
        if self._watch is None:
            self._watch = asyncio.create_task(self._keep_watching())
        gone_task = asyncio.ensure_future(gone())
        try:
            await asyncio.wait([held.answer, gone_task], timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone_task.cancel()
            self._let_go(code, held)
        if held.answer.done():
            return held.answer.result()
        held.answer.cancel()
        return version

    def _let_go(self, code: str, held: _Held) -> None:
        waiting = self._held[code]
        waiting.discard(held)
        self._count -= 1
        if not waiting:
            del self._held[code]

    async def _keep_watching(self) -> None:
        """Every tick_s while any ask is held: read the classes' versions and answer the asks whose class moved."""
        try:
            while self._held:
                await asyncio.sleep(self.tick_s)
                await self._tick()
        finally:
            self._watch = None

    async def _tick(self) -> None:
        codes = list(self._held)
        if not codes:
            return
        try:
            versions = await run_in_threadpool(self._read_versions, codes)
        except StoreUnavailable as error:  # each ask held says so: its page shows the class cannot be reached
            for waiting in self._held.values():
                for held in waiting:
                    if not held.answer.done():
                        held.answer.set_exception(StoreUnavailable(str(error)))
            return
        except Exception:  # a bug must not stop the watch: the asks end by their timeout, the log keeps why
            log.exception("reading the versions of %d classes failed", len(codes))
            return
        for code in codes:
            now = versions.get(code)
            for held in self._held.get(code, ()):
                if now != held.version and not held.answer.done():
                    held.answer.set_result(now)

