"""A model that takes long to load (SmolLM2's GGUF is dequantized for 15 s to a minute): the page shows the bundled
model meanwhile, with a bar under the model selector naming the load's stage, every session that asks for the model
watches the one load, and the page switches to the model once it is loaded. The load here is the real one, of a tiny
BERT folder, held at its first stage by the test until it lets it go."""

from __future__ import annotations

import threading

import pytest

from attention.models.model_list import BUNDLED_MODEL
from components.caches import model_loads, model_room, models
from components.caches.offered import MODEL_DIRS_ENV
from components.page import model_loading
from tests.conftest import save_tiny_bert
from tests.pages import assert_healthy, open_page, warnings


@pytest.fixture
def held_load(tmp_path, monkeypatch):
    """A tiny BERT offered as a folder, whose load stops after telling its first stage until gate is set; calls
    lists every load of it that started."""
    folder = str(save_tiny_bert(tmp_path / "slow-bert"))
    monkeypatch.setenv(MODEL_DIRS_ENV, folder)
    gate, calls, real = threading.Event(), [], models.load_model

    def held(name, *progress):
        if name == folder:
            calls.append(name)
            progress[0]("reading the weights")
            assert gate.wait(60), "the test never let the load go"
        return real(name, *progress)

    monkeypatch.setattr(models, "load_model", held)
    monkeypatch.setattr(model_loading, "QUICK_S", 0.2)
    monkeypatch.setattr(model_loading, "READ_AS_THEY_ARE_S", 0.2)  # a folder, held as long as a GGUF's load
    yield folder, gate, calls
    gate.set()
    models.model.clear(folder)


def bar(page) -> str:
    [progress] = page.get("progress")
    return progress.proto.text


def test_a_long_load_shows_a_bar_and_the_bundled_model_and_a_second_session_waits_for_the_same_load(held_load):
    folder, gate, calls = held_load
    first = open_page(model=folder)
    assert_healthy(first)
    assert bar(first) == "Loading slow-bert: reading the weights (step 1 of 2), 0 s"
    assert first.caption[0].value.startswith(f"{BUNDLED_MODEL}: 6 layers"), "the bundled model meanwhile"
    assert first.selectbox(key="model").value == folder, "the choice stays the reader's"
    assert "slow-bert is loading" in warnings(first), "said at the top too, where a link's reader looks"

    second = open_page(model=folder)
    assert_healthy(second)
    assert bar(second).startswith("Loading slow-bert: reading the weights")
    assert calls == [folder], "one load for both sessions"
    assert model_loads.LOADS.running() == (folder,)

    gate.set()
    job = first.session_state[model_loading._WATCHED][folder]
    assert job is second.session_state[model_loading._WATCHED][folder]
    assert job.wait(60) and job.succeeded
    for page in (first.run(), second.run()):
        assert_healthy(page)
        assert not page.get("progress")
        assert page.caption[0].value.startswith("slow-bert: 2 layers")
        assert "is loading" not in warnings(page)
    assert calls == [folder]


def test_a_load_that_fails_says_why_and_the_next_ask_loads_again(held_load, monkeypatch):
    """Refused for want of room (the memory budget holds no tiny BERT beside the bundled model): a notice, the
    bundled model, and no room kept for the model that was never loaded."""
    folder, gate, calls = held_load
    monkeypatch.setattr(models, "model_room_bytes", lambda: 1000)
    page = open_page(model=folder)
    assert_healthy(page)
    assert any(f"{folder!r} has" in warning.value and "Showing the bundled model instead" in warning.value
               for warning in page.warning)
    assert page.selectbox(key="model").value == BUNDLED_MODEL
    assert calls == [] and folder not in model_room.LOADED.held() and not model_loads.LOADS.running()

    monkeypatch.setattr(models, "model_room_bytes", lambda: 2**30)  # room at last: chosen again, it loads
    gate.set()
    page.selectbox(key="model").set_value(folder).run()
    job = page.session_state[model_loading._WATCHED].get(folder)
    if job is not None:  # still loading after QUICK_S: the bar, then the model at the next run
        assert job.wait(60)
        page.run()
    assert_healthy(page)
    assert page.caption[0].value.startswith("slow-bert: 2 layers") and not page.warning
    assert calls == [folder]
