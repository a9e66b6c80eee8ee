"""components/caches/models.py in the test's own process: the budget counts every model loaded at once, and
the language-model head (BERT's masked-language-model head, GPT-2's next-token head) keeps no copy of a model
the model cache has let go.

The models are tiny BERTs (and a tiny GPT-2) saved here, offered as local folders (MODEL_DIRS_ENV); the
budget is set as a deployer sets it (ATTENTION_ANATOMY_MEMORY_MB), just large enough for one of them beside the
bundled model.
"""

from __future__ import annotations

import itertools
import weakref

import pytest

from attention.experiments.head_switch import predict
from attention.models.lm_heads import load_language_model
from attention.models.loading import ModelLoadError, weights_path
from attention.models.model_list import BUNDLED_MODEL
from components.caches import model_room, models
from components.caches.budget import CACHE_ENTRIES
from components.caches.memory_budget import MEMORY_ENV, RUNTIME_MB, memory_budget
from components.caches.offered import MODEL_DIRS_ENV
from harness.checkpoints import tiny_gpt2
from tests.conftest import save_tiny_bert
from tests.pages import open_page, warnings


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Four tiny BERTs of the same size, each in a folder of its own."""
    return [str(save_tiny_bert(tmp_path_factory.mktemp(f"tiny-bert-{i}"))) for i in range(4)]


@pytest.fixture
def offered(folders, monkeypatch):
    """The folders on the page's model list, and no model loaded (the tests before this one in this process may have
    loaded theirs, which would take the room); after the test, none of the folders kept."""
    monkeypatch.setenv(MODEL_DIRS_ENV, ":".join(folders))
    models.model.clear()
    yield folders
    for folder in folders:
        models.model.clear(folder)


@pytest.fixture
def room_for_one(offered, monkeypatch):
    """The smallest budget whose room beside the bundled model holds one tiny BERT: it holds no two."""
    tiny = weights_path(offered[0]).stat().st_size
    for total in itertools.count(RUNTIME_MB):
        monkeypatch.setattr(models, "BUDGET", memory_budget({MEMORY_ENV: str(total)}, []))
        if models.model_room_bytes() >= tiny:
            break
    assert models.model_room_bytes() < 2 * tiny
    return offered


def test_two_models_that_each_fit_alone_are_not_loaded_together(room_for_one):
    first, second = room_for_one[:2]
    assert models.model(first).name == first
    with pytest.raises(ModelLoadError, match="does not fit beside") as refused:
        models.model(second)
    assert repr(first) in str(refused.value), "the notice names the model that takes the room"
    models.model.clear(first)  # the cache drops it: its room is free again
    assert models.model(second).name == second


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
        models.model(folder)
    assert CACHE_ENTRIES["model"] == 3
    held = model_room.LOADED.held()
    assert offered[0] not in held
    assert set(offered[1:]) <= set(held)


@pytest.fixture
def mlm_folder(tmp_path, monkeypatch):
    """A tiny BERT saved with its masked-language-model head, offered as a folder; after the test, not kept."""
    folder = str(save_tiny_bert(tmp_path / "tiny-mlm", with_mlm_head=True))
    monkeypatch.setenv(MODEL_DIRS_ENV, folder)
    yield folder
    models.model.clear(folder)
    models.lm_head.clear(folder)


def test_the_masked_lm_sits_on_the_encoder_the_model_cache_holds_now(mlm_folder):
    sentence = "the capital of france is [MASK] ."
    first, _ = models.language_model(mlm_folder)
    assert first.model is models.model(mlm_folder)
    let_go = weakref.ref(first.model.model)
    del first
    models.model.clear(mlm_folder)  # the model cache lets the encoder go, as when a class's models push it out
    encoder = models.model(mlm_folder)
    again, _ = models.language_model(mlm_folder)
    assert again.model is encoder, "the head on the encoder the model cache holds, not on the one it let go"
    assert let_go() is None, "nothing keeps the encoder the model cache let go: one copy of the weights"
    assert predict(again, sentence).top_ids == predict(load_language_model(mlm_folder), sentence).top_ids


@pytest.fixture
def gpt2_folder(tmp_path, monkeypatch):
    """A tiny GPT-2 (its LM head tied to the word embeddings), offered as a folder; after the test, not kept."""
    folder = str(tiny_gpt2(tmp_path / "tiny-gpt2"))
    monkeypatch.setenv(MODEL_DIRS_ENV, folder)
    yield folder
    models.model.clear(folder)
    models.lm_head.clear(folder)


def test_gpt2s_next_token_head_sits_on_the_model_the_model_cache_holds_now(gpt2_folder):
    first, _ = models.language_model(gpt2_folder)
    assert first.head.objective == "next"
    assert first.model is models.model(gpt2_folder)
    let_go = weakref.ref(first.model.model)
    del first
    models.model.clear(gpt2_folder)
    again, _ = models.language_model(gpt2_folder)
    assert again.model is models.model(gpt2_folder), "the head on the model the model cache holds, not the one let go"
    assert let_go() is None, "nothing keeps the model the model cache let go: one copy of the weights"
