"""The load test's peak memory (harness/server.py): the kernel's count of a process's peak starts again
when a class begins, so that the figure is the class's own, and no peak between two samples is missed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.server import memory_mb, reset_peak

# A child that fills 300 MB, frees them, says so and waits for its stdin to close.
FILL_AND_FREE = "import sys; block = bytearray(300 * 2**20); del block; print('freed', flush=True); sys.stdin.read()"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM and clear_refs are Linux's")
def test_the_peak_counts_again_from_a_reset():
    child = subprocess.Popen([sys.executable, "-c", FILL_AND_FREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout.readline().strip() == "freed"
        now, peak = memory_mb(child.pid)
        assert peak >= 300 > now
        assert reset_peak(child.pid)
        now, peak = memory_mb(child.pid)
        assert peak < 300 and peak >= now
    finally:
        child.stdin.close()
        child.wait(timeout=10)
