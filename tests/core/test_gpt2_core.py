"""GPT-2 through the core's family seam, on a tiny GPT-2 the tests build (random weights, a byte-level BPE trained
offline), and the mask as a setting on any model.

The references are transformers' own: GPT2Model's full forward pass (output_attentions, output_hidden_states) and a
hook on each GPT2Attention, not anything in attention/. Shapes: B batch, T tokens, C hidden size, nh heads.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.dissect.outline import build_outline
from attention.dissect.parity import layer_reference, parity_report
from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode, encode_batch
from attention.text.layer_inputs import next_layer_input

TOLERANCE = 1e-5
ROWS_SUM_TOLERANCE = 1e-5
TEXTS = ["what if it rains tomorrow", "the cat sat on the mat"]


def full_forward(loaded, encoding):
    """GPT2Model run once by transformers: every layer's attention weights and each GPT2Attention's output."""
    caught = {}
    handles = [block.attn.register_forward_hook(
        lambda _module, _inputs, output, index=index: caught.__setitem__(index, output[0]))
        for index, block in enumerate(loaded.model.h)]
    try:
        with torch.inference_mode():
            outputs = loaded.model(input_ids=torch.from_numpy(encoding.input_ids),
                                   attention_mask=torch.from_numpy(encoding.attention_mask),
                                   output_attentions=True, output_hidden_states=True)
    finally:
        for handle in handles:
            handle.remove()
    return outputs, caught


@pytest.mark.parametrize("texts", [TEXTS[:1], TEXTS], ids=["one text", "a padded batch"])
def test_every_head_equals_gpt2s_own_forward_pass(tiny_gpt2_model, texts):
    encoding = encode_batch(tiny_gpt2_model, [(text, None) for text in texts])
    outputs, attention_outputs = full_forward(tiny_gpt2_model, encoding)
    real = encoding.attention_mask.astype(bool)  # (B, T): padding queries are left out, as nothing reads them
    shape = tiny_gpt2_model.shape
    for layer in range(shape.num_layers):
        for head in range(shape.num_heads):
            trace = build_trace(tiny_gpt2_model, encoding, TraceSettings(layer=layer, head=head))
            theirs = outputs.attentions[layer][:, head].numpy()  # (B, T, T)
            np.testing.assert_allclose(trace["weights"][real], theirs[real], atol=TOLERANCE)
        residual = encoding.layer_input(layer)  # (B, T, C)
        np.testing.assert_allclose(trace["output"][real], attention_outputs[layer].numpy()[real], atol=TOLERANCE)
        np.testing.assert_allclose(trace["attention output"][real],
                                   (attention_outputs[layer].numpy() + residual)[real], atol=TOLERANCE)


def test_the_proof_against_gpt2s_eager_attention_and_plain_pytorch(tiny_gpt2_model):
    encoding = encode_batch(tiny_gpt2_model, [(text, None) for text in TEXTS])
    for layer in range(tiny_gpt2_model.shape.num_layers):
        reference = layer_reference(tiny_gpt2_model, encoding, layer)
        for head in range(tiny_gpt2_model.shape.num_heads):
            report = parity_report(build_trace(tiny_gpt2_model, encoding, TraceSettings(layer=layer, head=head)),
                                   reference)
            assert max(report.values()) < TOLERANCE, report


def test_gpt2s_heads_look_back_only_and_its_first_token_is_its_sink(tiny_gpt2_model):
    encoding = encode(tiny_gpt2_model, TEXTS[0])
    trace = build_trace(tiny_gpt2_model, encoding, TraceSettings(layer=1, head=2))
    weights = trace["weights"][0]  # (T, T)
    assert np.triu(weights, 1).max() == 0.0
    assert weights[0, 0] == pytest.approx(1.0)  # the first token can only look at itself
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=ROWS_SUM_TOLERANCE)
    assert encoding.sinks[0].tolist() == [True] + [False] * (encoding.num_tokens - 1)
    assert trace.mask_kind == "causal" and "after the query" in dict(zip(trace.names, (s.formula for s in trace.steps),
                                                                          strict=True))["masked"]


def test_causal_on_bert_zeroes_every_weight_above_the_diagonal_and_rows_still_sum_to_1(bundled):
    encoding = encode(bundled, "the animal didn't cross the street because it was too tired")
    for layer, head in ((0, 0), (2, 5), (5, 11)):
        causal = build_trace(bundled, encoding, TraceSettings(layer=layer, head=head, mask="causal"))["weights"][0]
        own = build_trace(bundled, encoding, TraceSettings(layer=layer, head=head))["weights"][0]
        assert np.triu(causal, 1).max() == 0.0
        np.testing.assert_allclose(causal.sum(axis=-1), 1.0, atol=ROWS_SUM_TOLERANCE)
        assert np.triu(own, 1).max() > 0.01, "without the what-if, BERT keeps looking both ways"


def test_none_on_gpt2_lets_every_token_look_both_ways(tiny_gpt2_model):
    encoding = encode(tiny_gpt2_model, TEXTS[0])
    weights = build_trace(tiny_gpt2_model, encoding, TraceSettings(mask="none"))["weights"][0]
    assert weights[np.triu_indices(len(weights), 1)].min() > 0.0


@pytest.mark.parametrize("window", [1, 2, 4])
def test_a_window_sees_itself_and_window_tokens_back(bundled, window):
    encoding = encode(bundled, "the quick brown fox jumps over the lazy dog")
    weights = build_trace(bundled, encoding, TraceSettings(layer=1, head=3, mask="window", window=window))["weights"][0]
    behind = np.arange(len(weights))[:, None] - np.arange(len(weights))[None, :]  # (T, T) i − j
    seen = (behind >= 0) & (behind <= window)
    assert weights[~seen].max() == 0.0
    assert weights[seen].min() > 0.0
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=ROWS_SUM_TOLERANCE)


def test_the_mask_is_a_what_if_on_the_shown_layer_only(bundled):
    """The layer's input is the model's own, whatever the mask: as with the scaling, one layer is changed."""
    encoding = encode(bundled, "time flies like an arrow")
    own = build_trace(bundled, encoding, TraceSettings(layer=3))
    causal = build_trace(bundled, encoding, TraceSettings(layer=3, mask="causal"))
    np.testing.assert_array_equal(own["layer_input"], causal["layer_input"])
    assert not np.allclose(own["weights"], causal["weights"])


def test_the_proof_refuses_a_what_if_mask(bundled):
    encoding = encode(bundled, "time flies like an arrow")
    what_if = build_trace(bundled, encoding, TraceSettings(mask="causal"))
    with pytest.raises(ValueError, match="own mask"):
        parity_report(what_if, layer_reference(bundled, encoding, 0))


@pytest.mark.parametrize("settings", [TraceSettings(), TraceSettings(layer=1, mask="none"),
                                      TraceSettings(source="random", head_dim=8, mask="window", window=2),
                                      TraceSettings(source="identity")])
def test_gpt2s_outline_is_its_trace_without_tensors(tiny_gpt2_model, settings):
    encoding = encode_batch(tiny_gpt2_model, [(text, None) for text in TEXTS])
    trace = build_trace(tiny_gpt2_model, encoding, settings)
    outline = build_outline(tiny_gpt2_model.shape, encoding, settings)
    assert [(s.name, s.stage, s.formula, s.shape) for s in outline.steps] == [
        (s.name, s.stage, s.formula, s.shape) for s in trace.steps]
    assert "token_type_ids" not in trace.names and "segment embeddings" not in trace.names
    assert outline.mask_kind == trace.mask_kind


def test_a_layer_input_made_from_the_layer_before_is_the_forward_passs(tiny_gpt2_model):
    encoding = encode_batch(tiny_gpt2_model, [(text, None) for text in TEXTS])
    for layer in range(tiny_gpt2_model.shape.num_layers):
        made = next_layer_input(tiny_gpt2_model, encoding.keeping([layer - 1] if layer else []), layer)
        np.testing.assert_array_equal(made.layer_input(layer), encoding.layer_input(layer))


def test_w_q_is_c_attns_first_columns_transposed(tiny_gpt2_model):
    """Conv1D stores (in, out): y = x · W + b. The family's Linear (out, in) must give the same queries."""
    attention = tiny_gpt2_model.model.h[0].attn
    projections = tiny_gpt2_model.family.projections(tiny_gpt2_model.model, 0)
    hidden = torch.randn(1, 5, tiny_gpt2_model.shape.hidden_size, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        query, key, value = attention.c_attn(hidden).split(attention.split_size, dim=2)  # (1, 5, C) each
        for ours, theirs in zip((projections.query, projections.key, projections.value), (query, key, value),
                                strict=True):
            torch.testing.assert_close(ours(hidden), theirs, atol=TOLERANCE, rtol=1e-5)
        torch.testing.assert_close(projections.output(hidden), attention.c_proj(hidden), atol=TOLERANCE, rtol=1e-5)


def test_a_sentence_pair_is_refused_for_gpt2_with_a_reason(tiny_gpt2_model):
    with pytest.raises(ValueError, match="GPT-2 reads one text"):
        encode(tiny_gpt2_model, "time flies", "fruit flies")
