"""The block around the heads (attention/dissect/block.py) against transformers' own layers, and the decomposition
of its attention block by source token (attention/dissect/mixing.py, after Kobayashi et al. 2021).

The bundled MiniLM's reference is transformers' BertModel on the same weights (harness/reference.py); GPT-2's and a
Llama's are the page's own transformers models, whose last hidden state has the final norm applied.
Shapes: B batch, T tokens, C hidden size.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.dissect import mixing as mixing_module
from attention.dissect.block import build_block
from attention.dissect.mixing import mixing, token_parts
from attention.models.loading import load_model
from attention.text.encoding import encode
from harness.checkpoints import tiny_llama
from harness.reference import transformers_model

TEXT = "The cat sat on the mat, and the dog watched it."
LAYER_TOLERANCE = dict(rtol=1e-5, atol=1e-5)  # float32: the same layer summed in another order
FINAL_NORMS = {"gpt2": "ln_f", "llama": "norm"}  # what the decoders' last hidden state has been through


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return load_model(str(tiny_llama(tmp_path_factory.mktemp("tiny-llama"))))


@pytest.fixture(params=["bundled", "tiny_gpt2_model", "llama"])
def loaded(request):
    return request.getfixturevalue(request.param)


def reference_hidden_states(loaded, encoding) -> tuple[torch.Tensor, ...]:
    """L + 1 x (B, T, C): transformers' own forward pass of the same checkpoint."""
    inputs = dict(input_ids=torch.from_numpy(encoding.input_ids),
                  attention_mask=torch.from_numpy(encoding.attention_mask))
    if loaded.family.name == "bert":
        inputs["token_type_ids"] = torch.from_numpy(encoding.token_type_ids)
    with torch.inference_mode():
        return transformers_model(loaded)(**inputs, output_hidden_states=True).hidden_states


def test_every_layer_is_transformers_layer_output(loaded):
    """build_block(ℓ).output is transformers' hidden_states[ℓ + 1] (the decoders' last through their final norm)."""
    encoding = encode(loaded, TEXT)
    reference = reference_hidden_states(loaded, encoding)
    layers = loaded.shape.num_layers
    for layer in range(layers):
        output = torch.from_numpy(build_block(loaded, encoding, layer).output)  # (B, T, C)
        if layer == layers - 1 and loaded.family.name in FINAL_NORMS:
            with torch.inference_mode():
                output = getattr(loaded.model, FINAL_NORMS[loaded.family.name])(output)
        np.testing.assert_allclose(output.numpy(), reference[layer + 1].numpy(), **LAYER_TOLERANCE)


def test_the_steps_say_where_the_norm_sits(loaded):
    block = build_block(loaded, encode(loaded, TEXT), 0)
    if loaded.family.name == "bert":
        assert block.placement == "post"
        assert block.names == ("residual in", "attention", "add attention", "attention norm", "MLP", "add MLP",
                               "MLP norm")
    else:
        assert block.placement == "pre"
        assert block.names == ("residual in", "attention norm", "attention", "add attention", "MLP norm", "MLP",
                               "add MLP")
    assert block.norm_name == ("RMSNorm" if loaded.family.name == "llama" else "LayerNorm")
    shape = (1, len(block.tokens[0]), loaded.shape.hidden_size)
    assert all(step.shape == shape for step in block.steps)
    np.testing.assert_allclose(block["add attention"], block["residual in"] + block["attention"], rtol=1e-6, atol=1e-6)
    written = block.written()
    assert set(written) == {"residual in", "attention", "residual after attention", "MLP"}
    assert all(norms.shape == shape[:2] and (norms > 0).all() for norms in written.values())


def test_the_attention_block_is_the_sum_of_its_tokens_parts(loaded):
    """Σ_j z̃_ij + b̃_i is the attention block's output: after the (linearised) LayerNorm for BERT, x + attention for
    the pre-norm decoders."""
    encoding = encode(loaded, TEXT)
    for layer in range(loaded.shape.num_layers):
        block = build_block(loaded, encoding, layer)
        target = block["attention norm"] if block.placement == "post" else block["add attention"]
        parts = token_parts(loaded, encoding, layer)
        np.testing.assert_allclose((parts.parts.sum(2) + parts.bias).numpy(), target, rtol=1e-4, atol=2e-5)


def test_a_decoders_first_token_mixes_nothing_and_future_tokens_put_in_nothing(loaded):
    encoding = encode(loaded, TEXT)
    result = mixing(loaded, encoding, 1)
    tokens = encoding.num_tokens
    assert result.contributions.shape == (1, tokens, tokens) and result.mixing_ratio.shape == (1, tokens)
    assert ((result.mixing_ratio >= 0) & (result.mixing_ratio <= 1)).all()
    if loaded.family.own_mask == "causal":
        assert result.mixing_ratio[0, 0] == 0.0
        np.testing.assert_array_equal(np.triu(result.contributions[0], 1), 0.0)
    else:
        assert (result.mixing_ratio[0] > 0.0).all()


def test_chunks_of_rows_give_the_whole(bundled, monkeypatch):
    encoding = encode(bundled, TEXT)
    whole = mixing(bundled, encoding, 2)
    monkeypatch.setattr(mixing_module, "CHUNK_FLOATS", 3 * encoding.num_tokens * bundled.shape.hidden_size)
    chunked = mixing(bundled, encoding, 2)
    np.testing.assert_allclose(chunked.contributions, whole.contributions, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(chunked.mixing_ratio, whole.mixing_ratio, rtol=1e-5, atol=1e-6)


def test_a_layer_out_of_range_is_refused_with_the_range(bundled):
    encoding = encode(bundled, TEXT)
    with pytest.raises(ValueError, match="from 0 to 5"):
        build_block(bundled, encoding, 6)
    with pytest.raises(ValueError, match="from 0 to 5"):
        mixing(bundled, encoding, -1)
