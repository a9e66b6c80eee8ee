"""Slots the server's threads share: at most `count` hold one at once, and a thread holds one however deeply
it nests (a trace built for a stack of heads waits once, not twice, and cannot wait for itself)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)


class ThreadSlots:
    def __init__(self, name: str, count: int, wait_s: float | None = None,
                 on_take: Callable[[], None] | None = None) -> None:
        """wait_s: how long a thread waits for a slot before it goes on without one (None: as long as it takes);
        on_take: run in the thread that has just taken a slot."""
        self.name, self.count, self.wait_s, self.on_take = name, count, wait_s, on_take
        self._free = threading.BoundedSemaphore(count)
        self._depth = threading.local()  # how deep this thread is inside its slot

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot while the block runs; taken by the outermost block of a thread only."""
        depth = getattr(self._depth, "value", 0)
        taken = depth == 0 and self._take()
        self._depth.value = depth + 1
        try:
            yield
        finally:
            self._depth.value = depth
            if taken:
                self._free.release()

    def _take(self) -> bool:
        if not self._free.acquire(timeout=self.wait_s):
            log.warning("no %s slot came free in %.0f s: going on without one", self.name, self.wait_s)
            return False
        if self.on_take is not None:
            self.on_take()
        return True
