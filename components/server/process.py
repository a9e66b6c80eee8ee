"""The server process's settings, made by one explicit call when the page starts (page.py), never
as a side effect of importing a module: torch's threads, glibc's pools and Arrow's memory and threads.

Every heavy thread (a slot of heavy work, a training's turn) runs on one torch thread: `one_torch_thread`
is what each of them calls as it starts its work. Once the first page has been drawn, `freeze_long_lived` takes
what lives as long as the process out of the cyclic garbage collector's sight.
"""

from __future__ import annotations

import gc
import threading

import pyarrow
import torch

from components.server import process_memory

# One thread per operation: the matrices of one rerun are small, many sessions share two cores, and
# every rerun runs in a fresh thread, where a thread pool per operation costs more than it saves.
TORCH_THREADS = 1
# Streamlit hands every chart's DataFrame to pyarrow, which converts the columns of any frame longer than 100
# rows on a thread pool it starts and joins for that one frame: 3 ms a heatmap instead of 0.3 ms, twelve
# times over for the grid of heads.
ARROW_THREADS = 1

_configured = threading.Event()
_frozen = threading.Event()
_freezing = threading.Lock()


def configure() -> None:
    """Set the process up for serving pages; once per process, however often the page's script runs."""
    if _configured.is_set():
        return
    one_torch_thread()
    pyarrow.set_cpu_count(ARROW_THREADS)
    process_memory.return_freed_memory()  # freed tensors and chart data go back to the system after a class
    _configured.set()


def one_torch_thread() -> None:
    """In the thread that calls it: OpenMP keeps the count per thread, and a rerun's fresh thread would otherwise
    multiply matrices with one thread per core, rounding the last bit apart from one thread's result."""
    torch.set_num_threads(TORCH_THREADS)


def freeze_long_lived() -> None:
    """Move every object alive now out of the cyclic collector's sight, once per process, however often it is
    called: at the end of the first page's run (page.py), once that run has loaded the model, traced its text and
    drawn its charts.

    By then about half a million objects live as long as the process: torch, transformers and the model, and the
    two thousand modules a first run imports beyond them (torch's symbolic shapes, sympy, scipy, Altair's schema).
    Out of sight, a full collection scans a tenth of them, and it holds every session while it runs
    (`python -m bench.gc_pause`). The collection run first frees what is garbage then, so that only what lives is
    frozen. Once is enough, and more is harm: a freeze also takes whatever else is alive at that moment (a class's
    widgets and charts, a model the cache will push out), and a frozen object that only a reference cycle holds is
    never freed.
    """
    with _freezing:
        if _frozen.is_set():
            return
        gc.collect()
        gc.freeze()
        _frozen.set()
