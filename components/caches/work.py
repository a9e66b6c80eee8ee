"""How much heavy work the server does at once: slots that a thread holds while it builds something large
(HEAVY_SLOTS) and while it draws a view (PAGE_SLOTS). Shared by every session of the process."""

from __future__ import annotations

import contextlib

from components.server.cpus import process_cpus
from components.server.process import one_torch_thread
from components.server.slots import ThreadSlots

# Building a trace, a stack of every head or a forward pass holds its tensors until it is done: at most
# HEAVY_SLOTS of them run at once, the others wait their turn. More would not finish sooner on as many
# cores, and thirty students opening 512-token texts at once would hold thirty sets of tensors. The cores are
# those the process may use (its container's quota, or ATTENTION_ANATOMY_CPUS), not the machine's: server/cpus.py.
HEAVY_SLOTS = process_cpus()

# Again in every thread that takes a heavy slot: a rerun runs in a fresh thread (server/process.py).
_heavy = ThreadSlots("heavy-work", HEAVY_SLOTS, on_take=one_torch_thread)


def heavy_work() -> contextlib.AbstractContextManager[None]:
    """Hold one of the HEAVY_SLOTS while the block runs (once per thread, however deeply nested).

    Taken before a cache is asked, never inside a cached function: Streamlit locks a key while its value
    is computed, and a thread that held that lock while it waited for a slot could wait for ever.
    """
    return _heavy.held()


def heavy_work_within(wait_s: float) -> contextlib.AbstractContextManager[None]:
    """heavy_work for a request of the App's routes: waits at most wait_s for a slot, then raises
    server.slots.NoSlotFree, and the route answers that the server is busy; a request that waited as long as it
    takes would hold one of the server's worker threads, and a handful in a loop all of them."""
    return _heavy.held_within(wait_s)


# A view's run holds, besides the numbers it computes, the copies its cache hits hand back (st.cache_data unpickles
# one on every hit), the pictures it encodes and the chart it sends: 20-35 MB at 474 tokens. Thirty students
# moving at once on two cores left a dozen runs under way, sharing the cores, each holding its share. At most
# PAGE_SLOTS views are drawn at once; the others wait before they take anything, and finish no later for it:
# two cores do not draw a dozen views sooner than three at a time. Waiting longer than PAGE_WAIT_S (a slot held
# by a view that has hung), a run goes on without one: better over the budget a moment than a class's pages
# stuck behind one.
PAGE_SLOTS = HEAVY_SLOTS + 1
PAGE_WAIT_S = 30.0
_page = ThreadSlots("page", PAGE_SLOTS, wait_s=PAGE_WAIT_S)


def page_work() -> contextlib.AbstractContextManager[None]:
    """Hold one of the PAGE_SLOTS while a view is drawn (once per thread, however deeply nested). Taken before
    anything is computed or asked of a cache, as heavy_work is, and never while holding a heavy slot."""
    return _page.held()
