"""Memory the server has freed goes back to the system, instead of staying in glibc's pools.

By default glibc gives every thread that allocates its own pool (arena) up to 8 per core, and it raises
its threshold for allocating large blocks straight from the system each time such a block is freed: after
a class has come and gone, the tensors of its traces sit as free space in a dozen pools, and the server's
resident memory stays at its peak. Capping the pools and fixing the threshold at LARGE_BYTES keeps a freed
block of that size or more from staying resident. A 474-token text makes many blocks of 0.7-0.9 MB (a layer's
input on the bundled model, one head's weights, their pickled copies in the caches): with the threshold at
1 MB they filled the pools, and a class of 30 on long texts peaked 130 MB higher (1,013 MB against 884; 4 ms
less CPU a move). Smaller blocks (a rerun's arrays of a few kB, a picture's bytes) still stay in the pools
once freed, so a thread asks glibc every TRIM_EVERY_S to give their free pages back (malloc_trim). Arrow's
buffers (every chart's data, and with pandas 3 every column of text, such as a grid's pictures) come from
glibc too, not from Arrow's own mimalloc pool, which kept 30 MB of them after they were freed: the class
peaked 20 MB lower. Linux with glibc only; elsewhere nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading
import time

import pyarrow

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameters (malloc.h)
M_ARENA_MAX = -8
ARENAS = 2  # pools shared by every thread: Streamlit runs each session's script in a thread of its own
LARGE_BYTES = 2**18  # blocks of 256 kB and more are the system's, given back when freed
# A trim takes 6-10 ms (27 at the 95th percentile) in a class, outside Python's lock: 1 % of a core.
TRIM_EVERY_S = 1.0
TRIM_THREAD = "malloc-trim"


def return_freed_memory() -> bool:
    """Set glibc's pools and threshold as above, and start the thread that trims the pools; False where there
    is no glibc to set."""
    libc = _glibc()
    if libc is None:
        return False
    done = libc.mallopt(M_ARENA_MAX, ARENAS) == 1 and libc.mallopt(M_MMAP_THRESHOLD, LARGE_BYTES) == 1
    if not done:
        log.warning("glibc refused the memory settings: freed memory may stay resident")
    pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    if not any(thread.name == TRIM_THREAD for thread in threading.enumerate()):
        threading.Thread(target=_trim_for_ever, args=(libc,), name=TRIM_THREAD, daemon=True).start()
    return done


def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def _trim_for_ever(libc: ctypes.CDLL) -> None:
    while True:
        time.sleep(TRIM_EVERY_S)
        libc.malloc_trim(0)
