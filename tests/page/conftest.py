"""What the page tests on a Llama share: the tiny Llama of harness/checkpoints.py (4 query heads sharing 2 key/value
heads, RoPE), saved once per worker, and a link to it with tests.pages.LLAMA_TEXT, which the page offers as a
configured folder."""

from __future__ import annotations

import pytest

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
