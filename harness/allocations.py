"""What a piece of work leaves allocated in this process: shared by the class store's tests and bench.class_flood."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable


def bytes_kept(work: Callable[[], None]) -> int:
    """Bytes still allocated after work() than before it, garbage collected (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        work()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
