"""What lives as long as the server is frozen out of the cyclic garbage collector's sight once, at the first model's
load (components/server/process.py), not at every load: what a later load freezes is never freed if a cycle holds it.

Real loads of the bundled model and of a tiny BERT offered as a folder, in the test's own process.
"""

from __future__ import annotations

import gc
import weakref

from attention.models.model_list import BUNDLED_MODEL
from components.caches import models, offered


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
