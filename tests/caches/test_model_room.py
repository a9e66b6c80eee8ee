"""The room the models' weights share (components/caches/model_room.py), with sizes made up: no model is loaded here."""

from __future__ import annotations

import threading

import pytest

from attention.models.loading import ModelLoadError
from components.caches.model_room import LoadedWeights

MB = 2**20
ROOM = 100 * MB


def test_two_models_that_each_fit_alone_do_not_fit_together():
    for name in ("uncased", "cased"):
        with LoadedWeights().reserved(name, 60 * MB, ROOM):
            pass
    weights = LoadedWeights()
    with weights.reserved("uncased", 60 * MB, ROOM):
        pass
    with pytest.raises(ModelLoadError) as refused, weights.reserved("cased", 60 * MB, ROOM):
        pytest.fail("loaded beside a model that leaves it no room")
    message = str(refused.value)
    assert "'cased' has 60 MB of weights" in message
    assert "('uncased', 60 MB): they take 60 MB of the 100 MB" in message
    assert weights.held() == {"uncased": 60 * MB}, "a refused model takes no room"


def test_a_model_the_cache_drops_gives_its_room_back():
    weights = LoadedWeights()
    with weights.reserved("uncased", 60 * MB, ROOM):
        pass
    weights.forget("uncased")
    with weights.reserved("cased", 60 * MB, ROOM):
        pass
    assert weights.held() == {"cased": 60 * MB}
    weights.forget("never loaded")
    assert weights.held() == {"cased": 60 * MB}


def test_a_model_that_fails_to_load_takes_no_room():
    weights = LoadedWeights()
    with pytest.raises(OSError), weights.reserved("broken", 60 * MB, ROOM):
        raise OSError("weights cut short")
    assert weights.held() == {}
    with weights.reserved("cased", 60 * MB, ROOM):
        pass


def test_a_model_loaded_again_under_its_name_is_counted_once():
    weights = LoadedWeights()
    for _ in range(2):
        with weights.reserved("uncased", 60 * MB, ROOM):
            pass
    assert weights.held() == {"uncased": 60 * MB}


def test_a_model_too_large_for_the_room_alone_gets_the_core_s_notice():
    notice = "MB of weights, more than the 100 MB this server's memory budget leaves"
    with pytest.raises(ModelLoadError, match=notice), LoadedWeights().reserved("large", 101 * MB, ROOM):
        pytest.fail("loaded, too large for the room")


def test_a_model_without_weights_of_its_own_to_count_is_never_refused():
    """The bundled model: the room is what the budget leaves beside it, so it takes none of it."""
    weights = LoadedWeights()
    with weights.reserved("uncased", 100 * MB, ROOM):
        pass
    with weights.reserved("bundled", 0, -5 * MB):
        pass
    assert weights.held() == {"uncased": 100 * MB}


def test_sessions_loading_at_once_never_take_more_than_the_room_together():
    weights = LoadedWeights()
    start, loading = threading.Barrier(8), threading.Barrier(3)
    loaded, refused = [], []

    def load(name: str) -> None:
        start.wait()
        try:
            with weights.reserved(name, 30 * MB, ROOM):
                loading.wait(timeout=30)  # the three that fit are all loading at once
            loaded.append(name)
        except ModelLoadError:
            refused.append(name)

    threads = [threading.Thread(target=load, args=(f"model {i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loaded) == 3 and len(refused) == 5
    assert sorted(weights.held()) == sorted(loaded)
