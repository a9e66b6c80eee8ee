"""Training on one CPU thread, for the toys the page trains (the counting lab, the induction lab).

Their matrices are tiny, and two threads spend their time waiting for each other (on a busy 2-core
machine 300 counting steps took 1 s on one thread, 8 to 95 s on two). torch.set_num_threads also sets
the default of threads that start meanwhile, so the previous count comes back when the last training
under way ends.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch

_lock = threading.Lock()
_state = {"runs": 0, "restore": 1}  # trainings under way; the thread count to go back to


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block on one torch thread, and restore the count when the last training under way ends."""
    with _lock:
        if _state["runs"] == 0:
            _state["restore"] = torch.get_num_threads()
        _state["runs"] += 1
        torch.set_num_threads(1)
    try:
        yield
    finally:
        with _lock:
            _state["runs"] -= 1
            if _state["runs"] == 0:
                torch.set_num_threads(_state["restore"])
