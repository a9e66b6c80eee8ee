"""What a head moves, α_ij·‖f(x_j)‖, against the same computed from transformers' own modules and forward pass.

The reference takes the layer's input from the model's output_hidden_states and its weights from
output_attentions, and f(x_j) = (x_j W_V + b_V) W_O^h from the model's own value and output modules:
nothing of attention/ but the function under test. Shapes: B batch, T tokens, C hidden size, nh heads, d head size.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.dissect.heads import head_stage
from attention.dissect.trace import layer_attention, projections_for
from attention.dissect.value_norms import moved, value_norms, weighted_by_value_norm
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from harness.reference import transformers_model, transformers_tokenizer

TEXT = "The cat sat on the mat, and then it slept."


def bert_reference(loaded, text: str, layer: int) -> np.ndarray:
    """(nh, T, T) α_ij·‖f(x_j)‖ of every head of a BERT layer, from transformers alone."""
    model = transformers_model(loaded)
    batch = transformers_tokenizer(loaded)(text, return_tensors="pt")
    with torch.inference_mode():
        run = model(**batch, output_attentions=True, output_hidden_states=True)
        attention = model.encoder.layer[layer].attention
        values = attention.self.value(run.hidden_states[layer])[0]  # (T, nh·d)
        return _moved(values, attention.output.dense.weight, run.attentions[layer][0])


def gpt2_reference(loaded, text: str, layer: int) -> np.ndarray:
    """(nh, T, T) the same for a GPT-2 layer: its value is the third part of c_attn on ln_1 of the layer's
    input, and Conv1D stores c_proj as (in, out), so W_O is its transpose."""
    model = loaded.model
    batch = transformers_tokenizer(loaded)(text, return_tensors="pt")
    with torch.inference_mode():
        run = model(**batch, output_attentions=True, output_hidden_states=True)
        block = model.h[layer]
        fused = block.attn.c_attn(block.ln_1(run.hidden_states[layer]))[0]  # (T, 3·nh·d)
        values = fused.split(block.attn.split_size, dim=-1)[2]  # (T, nh·d)
        return _moved(values, block.attn.c_proj.weight.t(), run.attentions[layer][0])


def _moved(values: torch.Tensor, output_weight: torch.Tensor, weights: torch.Tensor) -> np.ndarray:
    """values (T, nh·d), W_O (C, nh·d), weights (nh, T, T) -> (nh, T, T) α_ij·‖f(x_j)‖, one head at a time."""
    num_heads = weights.shape[0]
    size = values.shape[-1] // num_heads
    per_head = []
    for head in range(num_heads):
        columns = slice(head * size, (head + 1) * size)
        offered = values[:, columns] @ output_weight[:, columns].T  # (T, C): f(x_j)
        per_head.append(weights[head] * offered.norm(dim=-1)[None, :])  # (T, T)
    return torch.stack(per_head).numpy()


def ours(loaded, text: str, layer: int) -> np.ndarray:
    settings = TraceSettings(layer=layer)
    computed = layer_attention(loaded, encode(loaded, text), settings)
    norms = value_norms(computed.split("V"), projections_for(loaded, settings).output)  # (B, nh, T)
    return moved(computed.weights, norms)[0]  # (nh, T, T)


@pytest.mark.parametrize("layer", [0, 3, 5])
def test_what_a_bert_head_moves_equals_transformers(bundled, layer):
    np.testing.assert_allclose(ours(bundled, TEXT, layer), bert_reference(bundled, TEXT, layer),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layer", [0, 1])
def test_what_a_gpt2_head_moves_equals_transformers(tiny_gpt2_model, layer):
    np.testing.assert_allclose(ours(tiny_gpt2_model, TEXT, layer), gpt2_reference(tiny_gpt2_model, TEXT, layer),
                               rtol=1e-4, atol=1e-5)


def test_the_moved_stage_of_some_heads_is_those_heads_of_transformers(bundled):
    """heads.head_stage(…, "moved"), what the one-head view's stage draws, for a few heads out of the layer."""
    settings = TraceSettings(layer=3)
    computed = layer_attention(bundled, encode(bundled, TEXT), settings)
    some = head_stage(computed, "moved", [5, 0], output=projections_for(bundled, settings).output)[0]  # (2, T, T)
    np.testing.assert_allclose(some, bert_reference(bundled, TEXT, 3)[[5, 0]], rtol=1e-4, atol=1e-5)


def test_the_bundled_bert_parks_on_cls_but_moves_little_from_it(bundled):
    """Clark et al.'s no-op, seen on the bundled model: where bert-base parks on [SEP], all-MiniLM-L6-v2 parks on
    [CLS]. In a middle layer its heads put about half their weight there, yet [CLS] moves a small share of what
    they move (measured while writing this: 0.50 of the weight and 0.04 of what moves in layer 3)."""
    amounts = ours(bundled, TEXT, 3)  # (nh, T, T)
    weights = layer_attention(bundled, encode(bundled, TEXT), TraceSettings(layer=3)).weights[0]  # (nh, T, T)
    weight_share = weights[..., 0].sum() / weights.sum()
    moved_share = amounts[..., 0].sum() / amounts.sum()
    assert weight_share > 0.3
    assert moved_share < weight_share / 4


def test_the_identity_source_moves_its_value_vectors():
    values = np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2)  # (B, nh, T, d)
    np.testing.assert_allclose(value_norms(values, None), np.linalg.norm(values, axis=-1), rtol=1e-6)


def test_weighting_by_value_norm_keeps_rows_summing_to_one_and_a_silent_row_at_zero():
    weights = np.array([[[0.5, 0.5], [1.0, 0.0]]], dtype=np.float32)  # (1, T, T)
    norms = np.array([[3.0, 1.0]], dtype=np.float32)  # (1, T)
    np.testing.assert_allclose(weighted_by_value_norm(weights, norms), [[[0.75, 0.25], [1.0, 0.0]]])
    np.testing.assert_array_equal(weighted_by_value_norm(weights, np.zeros_like(norms)), np.zeros_like(weights))
