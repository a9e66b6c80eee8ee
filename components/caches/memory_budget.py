"""The server's memory budget: one number, from which the caches' sizes and the models that fit follow.

ATTENTION_ANATOMY_MEMORY_MB sets it; else the container's memory limit (its cgroup), when one is set;
else DEFAULT_MB. Out of it come, in this order: the Python runtime with torch, transformers and
Streamlit loaded (RUNTIME_MB, measured); what a class's open pages hold (SESSIONS × SESSION_MB); the
work in progress (WORK_MB: a few traces being built at once, work.HEAVY_SLOTS of them); the
caches, CACHE_SHARE of what is left; and the models' weights, the rest. A model is loaded only if its
weights fit beside the bundled one's and those of the other models loaded (caches/model_room.py). Every
size here is in MB (2**20 bytes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MEMORY_ENV = "ATTENTION_ANATOMY_MEMORY_MB"
# A laptop's share, where no container says otherwise: the offline decoder (SmolLM2-135M-Instruct, 513 MB of float32
# weights) fits beside the bundled model, with room for what its load holds on the way; a class of 30 on a
# bert-base-sized model fits too. A smaller server says so (ATTENTION_ANATOMY_MEMORY_MB, or its container's limit).
DEFAULT_MB = 2048
RUNTIME_MB = 500  # python -c "import torch, transformers, streamlit, altair, …": 484 MB resident
SESSIONS = 40  # a class, and its teacher
SESSION_MB = 3  # Streamlit's own state of an open page: its widgets, the last run's messages
WORK_MB = 120  # two 512-token traces of a bert-base-sized model being built, and their copies
CACHE_SHARE = 0.25  # of what the runtime, the sessions and the work leave; the weights get the rest
# Each cache's share of the caches' bytes, by its name in components/caches/budget.py, after what a class of 30 on
# 480-token texts keeps using: every student's layer input (and the one before it, which the next layer is made
# from), every head's context for the traces of the lesson and the neuron view, and the neuron view's numbers.
# A student's own charts are kept in their session; the shared charts are for students with the same text. A
# working set a little larger than its cache is the worst case of least-recently-used eviction: every student's
# entry is pushed out just before it is asked for again. Every head's weights of a layer ("layer") are kept for
# the run at hand: one or two layers of a 512-token text, every layer of a few short ones (caches/layers.py).
CACHE_SHARES = {
    "layer_encoding": 0.44,
    "layer_contexts": 0.12,
    "layer": 0.1,
    "head_stack": 0.04,
    "chart_data": 0.06,
    "drawn_chart": 0.04,
    "neuron_heads": 0.13,
    "rollout_by_layer": 0.035,
    "lab_random_scores": 0.035,
}
# Where Linux says how much memory the container may use: cgroup v2, then v1.
CGROUP_LIMIT_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
_NO_LIMIT_MB = 2**40 // 2**20  # cgroup v1 writes a number near 2**63 when there is no limit


@dataclass(frozen=True)
class MemoryBudget:
    total_mb: int
    source: str  # where the number came from, in words

    @property
    def spare_mb(self) -> int:
        """What the runtime, the open pages and the work in progress leave for the caches and the weights."""
        return max(0, self.total_mb - RUNTIME_MB - SESSIONS * SESSION_MB - WORK_MB)

    @property
    def caches_mb(self) -> int:
        return int(CACHE_SHARE * self.spare_mb)

    @property
    def weights_mb(self) -> int:
        """What the models' weights may take, all loaded models together."""
        return self.spare_mb - self.caches_mb

    def cache_bytes(self, name: str) -> int:
        """The bound, in bytes, of the cache named name (a key of CACHE_SHARES); at least 1 MB."""
        return max(2**20, int(CACHE_SHARES[name] * self.caches_mb * 2**20))

    def describe(self) -> str:
        return (f"{self.total_mb} MB ({self.source}): {self.caches_mb} MB for caches, {self.weights_mb} MB for "
                "the models' weights")


def memory_budget(environ=os.environ, limit_files=CGROUP_LIMIT_FILES) -> MemoryBudget:
    """The budget from the setting, else the container's limit, else the default; ValueError for a bad setting."""
    setting = environ.get(MEMORY_ENV, "").strip()
    if setting:
        try:
            total = int(setting)
        except ValueError:
            raise ValueError(f"{MEMORY_ENV} must be a whole number of MB, such as 2048; got {setting!r}") from None
        if total < RUNTIME_MB:
            raise ValueError(f"{MEMORY_ENV}={total} is less than the {RUNTIME_MB} MB that Python with torch and "
                             "Streamlit takes before any model; give the server more")
        return MemoryBudget(total, f"set by {MEMORY_ENV}")
    limit = container_limit_mb(limit_files)
    if limit is not None:
        return MemoryBudget(limit, "the container's memory limit")
    return MemoryBudget(DEFAULT_MB, "the default")


def container_limit_mb(limit_files=CGROUP_LIMIT_FILES) -> int | None:
    """The cgroup's memory limit in MB, or None when there is none (or no cgroup to read)."""
    for file in limit_files:
        try:
            text = Path(file).read_text().strip()
        except OSError:
            continue
        if text == "max":
            return None
        limit_mb = int(text) // 2**20
        return None if limit_mb >= _NO_LIMIT_MB else limit_mb
    return None
