"""Values shared by reference with every session, bounded in bytes rather than in entries: st.cache_resource keeps
a number of entries, whatever their size, and what the page reads several of in one run (every layer of a short
text) can be a hundred times smaller than the largest (one layer of a 512-token text). Each value is made once:
a thread that asks for a value being made waits for it, as Streamlit's caches make it wait."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

Value = TypeVar("Value")


class KeptByBytes(Generic[Value]):
    """The values last asked for, least recently used out first once they take more than max_bytes together; the
    value just made is kept whatever its size (one, as a cache of one entry would keep it)."""

    def __init__(self, max_bytes: int, size: Callable[[Value], int]) -> None:
        self.max_bytes, self._size = max_bytes, size
        self._kept: collections.OrderedDict[Hashable, tuple[Value, int]] = collections.OrderedDict()
        self._lock = threading.Lock()  # over _kept and _making
        self._making: dict[Hashable, threading.Lock] = {}  # held while its key's value is made

    def get(self, key: Hashable, make: Callable[[], Value]) -> Value:
        """The value kept under key, else make()'s, kept. make() runs outside the store's lock: other keys are
        asked for and made meanwhile; a second thread asking for the same key waits for the first's value."""
        while True:
            with self._lock:
                if key in self._kept:
                    self._kept.move_to_end(key)
                    return self._kept[key][0]
                making = self._making.get(key)
                if making is None:
                    making = self._making[key] = threading.Lock()
                    making.acquire()
                    break
            with making:  # another thread makes it: wait for it, then look again (it may have failed)
                pass
        try:
            value = make()
            with self._lock:
                self._keep(key, value)
            return value
        finally:
            with self._lock:
                del self._making[key]
            making.release()

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def kept_bytes(self) -> int:
        return sum(size for _, size in self._kept.values())

    def _keep(self, key: Hashable, value: Value) -> None:
        self._kept[key] = (value, self._size(value))
        while len(self._kept) > 1 and self.kept_bytes > self.max_bytes:
            self._kept.popitem(last=False)
