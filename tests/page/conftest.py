"""What the page tests share: the tiny Llama of harness/checkpoints.py (4 query heads sharing 2 key/value heads, RoPE),
saved once per worker, and a link to it with tests.pages.LLAMA_TEXT, which the page offers as a configured folder;
a tiny BERT with a masked-language-model head in a configured folder, for the switch view."""

from __future__ import annotations

import pytest

from components.caches.offered import MODEL_DIRS_ENV
from tests.conftest import save_tiny_bert
from tests.pages import LLAMA_TEXT


@pytest.fixture(scope="session")
def tiny_llama_checkpoint(tmp_path_factory):
    from harness.checkpoints import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture
def llama_link(tiny_llama_checkpoint, monkeypatch):
    """The query parameters of a link to the tiny Llama, which the page offers as a configured folder."""
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_llama_checkpoint))
    return {"model": str(tiny_llama_checkpoint), "text": LLAMA_TEXT}


@pytest.fixture(scope="module")
def masked_lm_folder(tmp_path_factory):
    """A tiny BertForMaskedLM in a folder the page offers (through the model-folders variable), for a module's tests."""
    folder = str(save_tiny_bert(tmp_path_factory.mktemp("tiny-mlm"), with_mlm_head=True))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(MODEL_DIRS_ENV, folder)
        yield folder
