"""Memory the server has freed goes back to the system, instead of staying in glibc's pools.

By default glibc gives every thread that allocates its own pool (arena) up to 8 per core, and it raises
its threshold for allocating large blocks straight from the system each time such a block is freed: after
a class has come and gone, the tensors of its traces sit as free space in a dozen pools, and the server's
resident memory stays at its peak. Capping the pools and fixing the threshold keeps a freed 1 MB tensor
from staying resident. Linux with glibc only; elsewhere nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameters (malloc.h)
M_ARENA_MAX = -8
ARENAS = 2  # pools shared by every thread: Streamlit runs each session's script in a thread of its own
LARGE_BYTES = 2**20  # blocks this large and larger are the system's, given back when freed


def return_freed_memory() -> bool:
    """Set glibc's pools and threshold as above; False where there is no glibc to set."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    done = mallopt(M_ARENA_MAX, ARENAS) == 1 and mallopt(M_MMAP_THRESHOLD, LARGE_BYTES) == 1
    if not done:
        log.warning("glibc refused the memory settings: freed memory may stay resident")
    return done
