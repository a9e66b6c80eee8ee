"""The memory budget: where the number comes from, and how it splits into caches and weights."""

from __future__ import annotations

import pytest

from components.caches.memory_budget import (
    CACHE_SHARES,
    DEFAULT_MB,
    MEMORY_ENV,
    RUNTIME_MB,
    MemoryBudget,
    container_limit_mb,
    memory_budget,
)


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
    ("1.5GB", "must be a whole number of MB, such as 1536; got '1.5GB'"),
    ("100", f"is less than the {RUNTIME_MB} MB that Python with torch and Streamlit takes"),
])
def test_a_bad_setting_is_refused_with_what_to_write(setting, says):
    with pytest.raises(ValueError, match=says.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)")):
        memory_budget({MEMORY_ENV: setting}, [])


def test_the_default_holds_a_bert_base_sized_model_beside_the_bundled_one_and_not_bert_large():
    budget = memory_budget({}, [])
    assert 90 + 440 <= budget.weights_mb < 90 + 1340
    assert budget.caches_mb + budget.weights_mb <= budget.total_mb - RUNTIME_MB


def test_the_caches_share_their_part_in_bytes():
    budget = MemoryBudget(2048, "test")
    assert sum(CACHE_SHARES.values()) == pytest.approx(1.0)
    total = sum(budget.cache_bytes(name) for name in CACHE_SHARES)
    assert total == pytest.approx(budget.caches_mb * 2**20, rel=1e-6)
    assert MemoryBudget(RUNTIME_MB, "tiny").cache_bytes("layer_encoding") == 2**20, "never below 1 MB"
