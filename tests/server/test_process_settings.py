"""The server process's settings (components/server/process.py) are made by one explicit call when the page
starts, never as a side effect of importing a module: a notebook or a test that imports the caches keeps its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import threading, torch, pyarrow
torch.set_num_threads(2)
import importlib, pkgutil, components.caches, components.charts.draw, components.views
for cache in pkgutil.iter_modules(components.caches.__path__):  # every module of the caches: the package imports none
    importlib.import_module(f"components.caches.{cache.name}")
print(torch.get_num_threads(), pyarrow.default_memory_pool().backend_name,
      any(t.name == "malloc-trim" for t in threading.enumerate()))
from components.server import process
process.configure()
process.configure()
print(torch.get_num_threads(), pyarrow.default_memory_pool().backend_name,
      sum(t.name == "malloc-trim" for t in threading.enumerate()))
"""


def test_importing_the_caches_changes_nothing_and_configure_sets_the_process_once():
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    imported, configured = (line.split() for line in result.stdout.strip().splitlines()[-2:])
    assert imported[0] == "2" and imported[2] == "False", f"importing set the process up: {imported}"
    assert configured == ["1", "system", "1"], configured
