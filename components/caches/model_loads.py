"""Models loaded in a thread of their own, so that a page shows how far a long load is instead of freezing.

A model read from disk loads in a second or two, but SmolLM2-135M-Instruct's GGUF is dequantized to float32 as it
loads, for 15 s to a minute: a page that waited in its script for that showed nothing but a spinner, and a second
session asking meanwhile waited, as silently, on the model cache's lock. Here a load runs in a thread that fills
the model cache itself (models.model, which counts the model's room and refuses it with a notice when it does not
fit), and tells the stage it is at (attention.models.loading's LOAD_STAGES, a GGUF's GGUF_LOAD_STAGES); the page
(components/page/model_loading.py) draws a bar from that. One load per model at a time, in the server process:
a session that asks for a model already loading joins that load.

No Streamlit here but what models.model is: the thread calls it with no script of its own running, which it
may (models.model shows no spinner, the one thing that asks for a page).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from attention.models import gguf
from attention.models.loading import GGUF_LOAD_STAGES, LOAD_STAGES, ModelLoadError, weights_path
from components.caches import models

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoadProgress:
    """Where a load is: the stage it started last (None before the first), of its stages, and for how long."""

    stage: str | None
    stages: tuple[str, ...]
    seconds: float

    @property
    def fraction(self) -> float:
        """The stages done, of them all: 0 before the first has started, 1 once "ready"."""
        if self.stage is None:
            return 0.0
        return self.stages.index(self.stage) / (len(self.stages) - 1)

    def __str__(self) -> str:
        if self.stage is None:  # weighing it, finding its family: a GGUF's header alone takes seconds
            return f"opening it, {self.seconds:.0f} s"
        number = min(self.stages.index(self.stage) + 1, len(self.stages) - 1)
        return f"{self.stage} (step {number} of {len(self.stages) - 1}), {self.seconds:.0f} s"


class Load:
    """One model's load, shared by every session that asks for it while it runs."""

    def __init__(self, name: str, stages: tuple[str, ...]) -> None:
        self.name = name
        self.stages = stages
        self.error: str | None = None  # why it failed, as a notice says it
        self._stage: str | None = None
        self._started = time.monotonic()
        self._done = threading.Event()

    def tell(self, stage: str) -> None:
        """The load's progress callback (attention.models.loading.Progress): stage starts now."""
        self._stage = stage

    @property
    def progress(self) -> LoadProgress:
        return LoadProgress(self._stage, self.stages, time.monotonic() - self._started)

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    @property
    def failed(self) -> bool:
        return self.finished and self.error is not None

    @property
    def succeeded(self) -> bool:
        return self.finished and self.error is None

    def wait(self, seconds: float) -> bool:
        """Whether the load has finished within seconds (at once, if it had)."""
        return self._done.wait(seconds)


class ModelLoads:
    """The loads running in this server process, by model name."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, Load] = {}

    def start(self, name: str) -> Load:
        """name's load: the one running, joined, else a new one in a thread of its own."""
        with self._lock:
            job = self._running.get(name)
            if job is None:
                job = self._running[name] = Load(name, stages_of(name))
                threading.Thread(target=self._run, args=(job,), name=f"load {name}", daemon=True).start()
            return job

    def running(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._running)

    def _run(self, job: Load) -> None:
        try:
            models.model(job.name, _progress=job.tell)
        except ModelLoadError as error:
            job.error = str(error)
        except Exception as error:  # a student gets a notice, the log the whole story
            log.exception("loading %s failed", job.name)
            job.error = (f"{job.name!r} could not be loaded ({type(error).__name__}: {error}); the error was logged "
                         "on the server.")
        finally:
            with self._lock:
                del self._running[job.name]  # the next ask starts anew: a retry, or a model the cache let go
            job._done.set()


def dequantized(name: str) -> bool:
    """Whether the model's weights are a GGUF's, dequantized as they load (15 s to a minute), not read as they are."""
    try:
        return weights_path(name).suffix == gguf.SUFFIX
    except ModelLoadError:  # no weights to read: its load says why, at once
        return False


def stages_of(name: str) -> tuple[str, ...]:
    """The stages name's load tells, in order: a GGUF's, or a checkpoint's."""
    return GGUF_LOAD_STAGES if dequantized(name) else LOAD_STAGES


# This server process's loads. Here rather than in models.py, as model_room.LOADED is: a models.py reloaded while the
# server runs must not forget the loads running.
LOADS = ModelLoads()

