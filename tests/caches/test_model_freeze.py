"""What lives as long as the server is frozen out of the cyclic garbage collector's sight once, at the end of the first
page's run (components/server/process.py), not at a model's load: what a later load froze would never be freed if a
cycle held it, and what the first run imports after the model's load (two thousand modules) would be scanned by
every full collection, a pause of every session.

Real loads of the bundled model and of a tiny BERT offered as a folder, in the test's own process; the page's first
run in a fresh process, as a new server's.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

from attention.models.model_list import BUNDLED_MODEL
from components.caches import models, offered
from tests.pages import APP

# A fresh process's first page, run in Streamlit's test runner: which of the modules its run imported the collector
# still scans, and whether garbage alive before the run is freed.
FIRST_RUN = f"""
import gc, sys, weakref
from streamlit.testing.v1 import AppTest

class Cycle:
    def __init__(self):
        self.itself = self

garbage = Cycle()
gone = weakref.ref(garbage)
del garbage
gc.disable()  # only the page's own collection may free it
before = set(sys.modules)
page = AppTest.from_file({APP!r}, default_timeout=300)
page.query_params.update(text="the cat sat on the mat because it was tired")
page.run()
assert not page.exception, page.exception
imported = [sys.modules[name] for name in set(sys.modules) - before if sys.modules[name] is not None]
scanned = {{id(thing) for thing in gc.get_objects()}}
print(len(imported), sum(id(module) in scanned for module in imported), gone() is None)
"""


class _Cycle:
    """An object that holds itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.itself = self


def test_a_later_model_load_freezes_nothing_so_garbage_alive_then_is_freed(tiny_checkpoint, monkeypatch):
    folder = str(tiny_checkpoint)
    monkeypatch.setenv(offered.MODEL_DIRS_ENV, folder)
    models.model(BUNDLED_MODEL)  # the first load of this process (or an earlier test's): what lives is frozen
    models.model.clear(folder)  # so that the folder's model is loaded anew, for real
    garbage = _Cycle()
    gone = weakref.ref(garbage)
    del garbage  # garbage now, waiting for the cyclic collector
    frozen = gc.get_freeze_count()
    gc.disable()  # the load allocates enough to run a collection that would free it before any freeze
    try:
        models.model(folder)
    finally:
        gc.enable()
        models.model.clear(folder)
    assert gc.get_freeze_count() <= frozen, "the second load froze what was alive then"
    gc.collect()
    assert gone() is None, "garbage alive at a later model's load was frozen, and a frozen cycle is never freed"


def test_the_first_pages_run_freezes_the_modules_it_imported_after_freeing_what_was_garbage():
    """Before, the freeze came at the model's load, in the middle of the first run: the modules imported after it
    stayed in the collector's sight, and a full collection scanned 221,000 objects (128 ms) instead of 3,000."""
    done = subprocess.run([sys.executable, "-c", FIRST_RUN], cwd=Path(APP).parent, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    imported, still_scanned, garbage_freed = done.stdout.split()[-3:]
    assert int(imported) > 1000, "the page's run imports torch, transformers and the rest"
    assert int(still_scanned) == 0, f"{still_scanned} of the {imported} modules the run imported are not frozen"
    assert garbage_freed == "True", "garbage alive at the freeze was frozen, and a frozen cycle is never freed"
