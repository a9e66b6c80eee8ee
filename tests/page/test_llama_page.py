"""The page on a Llama checkpoint folder opened by a link (model=<folder>): every view draws on the tiny Llama of
harness/checkpoints.py (4 query heads sharing 2 key/value heads, RoPE), with its family named, and the shapes
panel showing K and V with fewer heads than Q."""

from __future__ import annotations

import pytest

from components.page.view_list import VIEW_NAMES, view_named
from tests.pages import assert_healthy, open_page

TEXT = "what if it rains tomorrow"


@pytest.fixture(scope="module")
def tiny_llama_checkpoint(tmp_path_factory):
    from harness.checkpoints import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture
def llama_link(tiny_llama_checkpoint, monkeypatch):
    """The query parameters of a link to the tiny Llama, which the page offers as a configured folder."""
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_llama_checkpoint))
    return {"model": str(tiny_llama_checkpoint), "text": TEXT}


@pytest.mark.parametrize("view", VIEW_NAMES)
def test_every_view_draws_on_a_llama(view, llama_link):
    page = open_page({**llama_link, "view": view})
    assert_healthy(page)
    if not view_named(view).standalone:  # the toys train their own heads and name no model
        assert any("Llama" in caption.value and "looks back only" in caption.value for caption in page.caption)
