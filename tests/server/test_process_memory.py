"""Freed tensors go back to the system (components/server/process_memory.py), measured in a fresh process.

A worker thread (as Streamlit's session threads are) allocates a hundred 2 MB blocks (or 0.7 MB ones, or
columns of pictures in Arrow's strings) with small ones between them, after a 4 MB block was freed (which
raises glibc's own threshold), then frees the large ones.
Small blocks (64 kB, under the threshold) stay in glibc's pools once freed, until the trimming thread gives
their pages back.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = """
import sys, threading
sys.path.insert(0, {root!r})
import numpy as np
import pandas as pd
if {tuned}:
    from components.server.process_memory import return_freed_memory
    assert return_freed_memory()

def rss_mb():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) // 1024

found = {{}}
def work():
    first = np.ones(4 * 2**20, dtype=np.uint8)
    del first
    pairs = [({make}, np.ones(1000, dtype=np.uint8)) for _ in range(100)]  # a small block pinned after each
    blocks, found["pins"] = [block for block, _ in pairs], [pin for _, pin in pairs]
    del pairs
    found["full"] = rss_mb()
    blocks.clear()
    found["freed"] = rss_mb()
thread = threading.Thread(target=work)
thread.start()
thread.join()
print(found["full"] - found["freed"])
"""
TWO_MB = "np.ones(2 * 2**20, dtype=np.uint8)"
LAYER_INPUT = "np.ones(474 * 384 * 4, dtype=np.uint8)"  # 474 tokens × 384 floats of the bundled model: 0.7 MB
# A heads grid's pictures: 12 data URLs of 95 kB in a column of text, Arrow's strings in pandas 3 (1.1 MB)
PICTURES = 'pd.DataFrame({"url": ["data:image/png;base64," + "A" * 95_000 + str(i) for i in range(12)]})'

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists() or sys.platform != "linux",
                                reason="reads Linux's /proc and sets glibc's malloc")


def returned_mb(tuned: bool, make: str = TWO_MB) -> int:
    """MB of resident memory that freeing a hundred blocks made by `make` (200 MB by default) gave back."""
    scenario = SCENARIO.format(root=str(ROOT), tuned=tuned, make=make)
    run = subprocess.run([sys.executable, "-c", scenario], capture_output=True, text=True, check=True, timeout=60)
    return int(run.stdout.strip())


def test_freed_large_blocks_leave_the_process():
    assert returned_mb(tuned=True) >= 180


def test_a_freed_layer_input_of_a_long_text_leaves_the_process_at_once():
    """Under glibc's 1 MB, over the threshold set."""
    assert returned_mb(tuned=True, make=LAYER_INPUT) >= 60


def test_without_the_settings_glibc_keeps_them():
    assert returned_mb(tuned=False) < 50, "glibc changed: the settings may no longer be needed"


def test_freed_arrow_text_leaves_the_process():
    assert returned_mb(tuned=True, make=PICTURES) >= 90


def test_without_the_settings_arrow_keeps_its_text():
    assert returned_mb(tuned=False, make=PICTURES) < 30, "Arrow's pool changed: the setting may no longer be needed"


SMALL_BLOCKS = """
import sys, threading, time
sys.path.insert(0, {root!r})
import numpy as np
from components.server.process_memory import TRIM_EVERY_S, return_freed_memory
assert return_freed_memory()

def rss_mb():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) // 1024

found = {{}}
def work():
    blocks = [np.ones(64 * 2**10, dtype=np.uint8) for _ in range(3000)]  # 190 MB in blocks under the threshold
    found["pin"] = np.ones(64 * 2**10, dtype=np.uint8)  # after them: the pool's top cannot simply shrink
    found["full"] = rss_mb()
    blocks.clear()
thread = threading.Thread(target=work)
thread.start()
thread.join()
time.sleep(3 * TRIM_EVERY_S)
print(found["full"] - rss_mb())
"""


def test_freed_small_blocks_leave_the_process_within_a_few_seconds():
    run = subprocess.run([sys.executable, "-c", SMALL_BLOCKS.format(root=str(ROOT))], capture_output=True, text=True,
                         check=True, timeout=60)
    assert int(run.stdout.strip()) >= 150
