"""The memory budget: where the number comes from, how it splits into caches and weights, and that it bounds what a
server process keeps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from components.caches.memory_budget import (
    DEFAULT_MB,
    MEMORY_ENV,
    RUNTIME_MB,
    MemoryBudget,
    container_limit_mb,
    memory_budget,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_setting_wins_over_the_container(tmp_path):
    limit = tmp_path / "memory.max"
    limit.write_text(str(3 * 2**30))
    assert memory_budget({MEMORY_ENV: "2048"}, [limit]) == MemoryBudget(2048, f"set by {MEMORY_ENV}")
    assert memory_budget({}, [limit]) == MemoryBudget(3072, "the container's memory limit")


@pytest.mark.parametrize("written", ["max", str(2**63 - 4096)], ids=["cgroup v2", "cgroup v1"])
def test_a_container_without_a_limit_gets_the_default(tmp_path, written):
    limit = tmp_path / "limit"
    limit.write_text(written + "\n")
    assert container_limit_mb([limit]) is None
    assert memory_budget({}, [limit]) == MemoryBudget(DEFAULT_MB, "the default")
    assert memory_budget({}, [tmp_path / "missing"]).total_mb == DEFAULT_MB


@pytest.mark.parametrize(("setting", "says"), [
    ("1.5GB", "must be a whole number of MB, such as 2048; got '1.5GB'"),
    ("100", f"is less than the {RUNTIME_MB} MB that Python with torch and Streamlit takes"),
])
def test_a_bad_setting_is_refused_with_what_to_write(setting, says):
    with pytest.raises(ValueError, match=says.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)")):
        memory_budget({MEMORY_ENV: setting}, [])


def test_the_default_holds_a_bert_base_sized_model_beside_the_bundled_one_and_not_bert_large():
    budget = memory_budget({}, [])
    assert 90 + 440 <= budget.weights_mb < 90 + 1340
    assert budget.caches_mb + budget.weights_mb <= budget.total_mb - RUNTIME_MB


# A server process that asks its layer-input cache (components/caches/texts.py) for TEXTS long texts' inputs of
# layer 0, and prints that cache's bound in bytes and how much its resident memory grew (both in MB).
FILL_THE_CACHE = """
import os, sys
from attention.models.model_list import BUNDLED_MODEL
from components.caches import texts
from components.caches.budget import BUDGET
from components.server import process

def resident_mb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

process.configure()  # as the server is: freed blocks of 256 kB and more go back to the system
texts.layer_encoding(BUNDLED_MODEL, "the model loaded and a first text read " * 60, "", 0)
before = resident_mb()
for number in range(int(sys.argv[1])):
    texts.layer_encoding(BUNDLED_MODEL, f"text number {number} " + "word " * 600, "", 0)
print(BUDGET.cache_bytes("layer_encoding") / 2**20, resident_mb() - before)
"""
TEXTS = 60  # 512 tokens each: a layer's input of the bundled model is 0.75 MB, 45 MB for them all
ALLOCATOR_SLACK_MB = 10  # what a process's resident memory moves by without keeping anything


def _fill_the_layer_inputs_cache(budget_mb: int) -> tuple[float, float]:
    """(the cache's bound, the growth of a server process's resident memory), in MB, after TEXTS texts."""
    done = subprocess.run([sys.executable, "-c", FILL_THE_CACHE, str(TEXTS)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, MEMORY_ENV: str(budget_mb)})
    assert done.returncode == 0, done.stderr
    bound_mb, grown_mb = map(float, done.stdout.split()[-2:])
    return bound_mb, grown_mb


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads a process's resident memory from /proc")
def test_the_budget_bounds_what_a_server_s_cache_keeps_of_real_layer_inputs():
    """The smallest budget leaves the caches their least (1 MB each): a class's long texts then cost a server
    next to nothing kept. A large one lets the same cache keep them all, which the measurement sees."""
    bound_mb, grown_mb = _fill_the_layer_inputs_cache(RUNTIME_MB)
    assert bound_mb == 1
    assert grown_mb < bound_mb + ALLOCATOR_SLACK_MB, f"{TEXTS} texts' inputs kept past a {bound_mb} MB bound"
    bound_mb, grown_mb = _fill_the_layer_inputs_cache(16384)
    assert bound_mb > TEXTS
    assert grown_mb > 0.75 * TEXTS * 0.75, "the cache kept the inputs it had room for"
