"""components/compute.py's models in the test's own process: the budget counts every model loaded at once.

The models are tiny BERTs saved here, offered as local folders (compute.MODEL_DIRS_ENV); the budget is set as
a deployer sets it (ATTENTION_ANATOMY_MEMORY_MB), just large enough for one of them beside the bundled model.
"""

from __future__ import annotations

import itertools

import pytest

from attention import BUNDLED_MODEL, ModelLoadError, weights_path
from components import compute, model_room
from components.memory_budget import MEMORY_ENV, RUNTIME_MB, memory_budget
from tests.conftest import save_tiny_bert
from tests.pages import open_page, warnings


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Four tiny BERTs of the same size, each in a folder of its own."""
    return [str(save_tiny_bert(tmp_path_factory.mktemp(f"tiny-bert-{i}"))) for i in range(4)]


@pytest.fixture
def offered(folders, monkeypatch):
    """The folders on the page's model list, none of them loaded; after the test, none of them kept."""
    monkeypatch.setenv(compute.MODEL_DIRS_ENV, ":".join(folders))
    for folder in folders:
        compute.model.clear(folder)
    yield folders
    for folder in folders:
        compute.model.clear(folder)


@pytest.fixture
def room_for_one(offered, monkeypatch):
    """The smallest budget whose room beside the bundled model holds one tiny BERT: it holds no two."""
    tiny = weights_path(offered[0]).stat().st_size
    for total in itertools.count(RUNTIME_MB):
        monkeypatch.setattr(compute, "BUDGET", memory_budget({MEMORY_ENV: str(total)}, []))
        if compute.model_room_bytes() >= tiny:
            break
    assert compute.model_room_bytes() < 2 * tiny
    return offered


def test_two_models_that_each_fit_alone_are_not_loaded_together(room_for_one):
    first, second = room_for_one[:2]
    assert compute.model(first).name == first
    with pytest.raises(ModelLoadError, match="does not fit beside") as refused:
        compute.model(second)
    assert repr(first) in str(refused.value), "the notice names the model that takes the room"
    compute.model.clear(first)  # the cache drops it: its room is free again
    assert compute.model(second).name == second


def test_the_page_says_why_a_model_that_does_not_fit_beside_another_is_not_shown(room_for_one):
    first, second = room_for_one[:2]
    page = open_page(model=first)
    assert not page.exception, [e.message for e in page.exception]
    assert page.selectbox(key="model").value == first
    page.selectbox(key="model").set_value(second).run()
    assert not page.exception, [e.message for e in page.exception]
    assert f"{second!r} has" in warnings(page) and "Showing the bundled model instead" in warnings(page)
    assert page.selectbox(key="model").value == BUNDLED_MODEL


def test_a_model_the_cache_pushes_out_is_no_longer_counted(offered):
    for folder in offered:  # four models through a cache of three: the least recently used goes
        compute.model(folder)
    assert compute.CACHE_ENTRIES["model"] == 3
    held = model_room.LOADED.held()
    assert offered[0] not in held
    assert set(offered[1:]) <= set(held)
