"""Slots the server's threads share: at most `count` hold one at once, and a thread holds one however deeply
it nests (a trace built for a stack of heads waits once, not twice, and cannot wait for itself)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)


class NoSlotFree(RuntimeError):
    """No slot came free within the wait a caller allowed (held_within): the caller says it is busy."""


class ThreadSlots:
    def __init__(self, name: str, count: int, wait_s: float | None = None,
                 on_take: Callable[[], None] | None = None) -> None:
        """wait_s: how long a thread waits for a slot before it goes on without one (None: as long as it takes);
        on_take: run in the thread that has just taken a slot."""
        self.name, self.count, self.wait_s, self.on_take = name, count, wait_s, on_take
        self._free = threading.BoundedSemaphore(count)
        self._depth = threading.local()  # how deep this thread is inside its slot

    def held(self) -> contextlib.AbstractContextManager[None]:
        """Hold a slot while the block runs; taken by the outermost block of a thread only. Waits wait_s (None: as
        long as it takes), then goes on without one."""
        return self._held(self.wait_s, go_on=True)

    def held_within(self, wait_s: float) -> contextlib.AbstractContextManager[None]:
        """As held, but waiting at most wait_s, then NoSlotFree rather than going on without one: for a request that
        can be asked again, which must neither hold the server's worker threads in a line nor add to the work."""
        return self._held(wait_s, go_on=False)

    @contextlib.contextmanager
    def _held(self, wait_s: float | None, go_on: bool) -> Iterator[None]:
        depth = getattr(self._depth, "value", 0)
        taken = depth == 0 and self._take(wait_s, go_on)
        self._depth.value = depth + 1
        try:
            yield
        finally:
            self._depth.value = depth
            if taken:
                self._free.release()

    def _take(self, wait_s: float | None, go_on: bool) -> bool:
        if not self._free.acquire(timeout=wait_s):
            if not go_on:
                raise NoSlotFree(f"no {self.name} slot came free in {wait_s:.1f} s")
            log.warning("no %s slot came free in %.0f s: going on without one", self.name, wait_s)
            return False
        if self.on_take is not None:
            self.on_take()
        return True
