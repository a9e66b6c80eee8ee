"""The all-heads core (head_weights, aggregate_heads, rollout, head_summary) and the neuron view's numbers.

Shapes: B batch, T tokens, nh heads, d head size. Hand-computed matrices for the arithmetic,
the tiny random BERT for the trace logic, the bundled model for one real-weights check.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention.analyses.neuron import neuron_heads, neuron_view
from attention.dissect.heads import (
    aggregate_heads,
    head_entropies,
    head_stage,
    head_summary,
    head_weights,
    mean_of_heads,
    rollout,
    row_entropy,
)
from attention.dissect.trace import build_trace, layer_attention
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode, encode_batch

TEXT = "time flies like an arrow"


@pytest.fixture(scope="module")
def encoding(tiny):
    return encode(tiny, TEXT)


@pytest.mark.parametrize("settings", [
    TraceSettings(layer=1),
    TraceSettings(layer=0, scaling="none"),
    TraceSettings(layer=1, scaling="temperature", temperature=0.37),
    TraceSettings(source="random", head_dim=8, seed=3),
    TraceSettings(source="random", head_dim=5, scaling="linear"),
    TraceSettings(source="identity"),
    TraceSettings(layer=1, similarity="cosine"),
], ids=["bert", "bert-none", "bert-temperature", "random", "random-uneven", "identity", "cosine"])
def test_head_weights_equal_each_heads_trace(settings, tiny, encoding):
    every_head = head_weights(build_trace(tiny, encoding, settings))  # (1, nh, T, T)
    num_heads = settings.num_heads(tiny.shape)
    assert every_head.shape == (1, num_heads, encoding.num_tokens, encoding.num_tokens)
    for head in range(num_heads):
        one = build_trace(tiny, encoding, dataclasses.replace(settings, head=head))
        np.testing.assert_allclose(every_head[:, head], one["weights"], atol=1e-7)


def test_head_weights_of_the_real_model(bundled):
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=3, head=7))
    # Every head at once against the trace's one head: different matrix products, equal within float32 rounding.
    np.testing.assert_allclose(head_weights(trace)[:, 7], trace["weights"], rtol=1e-5, atol=1e-6)


def test_head_weights_of_some_heads_in_small_chunks(tiny, encoding):
    trace = build_trace(tiny, encoding, TraceSettings(source="random", head_dim=4))  # 8 heads
    every_head = head_weights(trace)
    # Chunks of other sizes are other matrix products: equal within float32 rounding.
    np.testing.assert_allclose(head_weights(trace, [5, 1, 2], max_elements=1), every_head[:, [5, 1, 2]],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(head_weights(trace, range(2, 6)), every_head[:, 2:6], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="head must be from 0 to 7; got 8"):
        head_weights(trace, [8])


def test_head_weights_of_a_padded_batch(tiny):
    batch = encode_batch(tiny, [(TEXT, None), ("I am looking for a hot job and a warm flat", None)])
    trace = build_trace(tiny, batch, TraceSettings(layer=1, head=2))
    weights = head_weights(trace)  # (2, nh, T, T)
    np.testing.assert_allclose(weights[:, 2], trace["weights"], atol=1e-7)
    padding = batch.attention_mask[0] == 0
    assert padding.any()
    assert np.all(weights[0][..., padding] == 0), "no weight on the first text's padding"


HEADS = np.array([  # (nh=2, T=2, T=2)
    [[0.9, 0.1], [0.2, 0.8]],
    [[0.5, 0.5], [0.6, 0.4]],
])


def test_aggregate_heads_mean_and_max():
    np.testing.assert_allclose(aggregate_heads(HEADS, "mean"), [[0.7, 0.3], [0.4, 0.6]])
    np.testing.assert_allclose(aggregate_heads(HEADS, "max"), [[0.9, 0.5], [0.6, 0.8]])
    np.testing.assert_allclose(aggregate_heads(HEADS[None], "mean").sum(axis=-1), 1.0)
    with pytest.raises(ValueError, match="aggregate must be one of mean, max; got 'rollout'"):
        aggregate_heads(HEADS, "rollout")


def test_rollout_by_hand():
    first = np.array([[[[1.0, 0.0], [0.5, 0.5]]]])  # (B=1, nh=1, 2, 2)
    swap = np.array([[[[0.0, 1.0], [1.0, 0.0]]]])
    # A = ½·W + ½·I: [[1, 0], [.25, .75]] for the first layer, [[.5, .5], [.5, .5]] for the swap.
    np.testing.assert_allclose(rollout([first]), [[1.0, 0.0], [0.25, 0.75]])
    np.testing.assert_allclose(rollout([first, swap]), [[0.625, 0.375], [0.625, 0.375]])
    two_heads = np.array([[[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]]])  # mean [[.5, .5], [.5, .5]]
    np.testing.assert_allclose(rollout([two_heads]), [[0.75, 0.25], [0.25, 0.75]])
    with pytest.raises(ValueError, match="at least one layer"):
        rollout([])


def test_rollout_rows_sum_to_one_on_the_model(tiny, encoding):
    layers = [head_weights(build_trace(tiny, encoding, TraceSettings(layer=layer))) for layer in range(2)]
    flow = rollout(layers)
    assert flow.shape == (encoding.num_tokens,) * 2
    np.testing.assert_allclose(flow.sum(axis=-1), 1.0, atol=1e-5)


def test_head_summary_entropy_and_largest_weight():
    tokens = 5
    uniform = np.full((1, 1, tokens, tokens), 1 / tokens)
    one_hot = np.eye(tokens)[None, None]
    summary = head_summary(np.concatenate([uniform, one_hot], axis=1), np.ones((1, tokens)))
    np.testing.assert_allclose(summary["entropy"], [math.log(tokens), 0.0], atol=1e-9)
    np.testing.assert_allclose(summary["max_weight"], [1 / tokens, 1.0])


def test_head_summary_of_a_shared_read_only_layer_leaves_it_as_it_was(tiny, encoding):
    layer = head_weights(layer_attention(tiny, encoding, TraceSettings(layer=1)))  # (1, nh, T, T) read-only
    before = layer.copy()
    summary = head_summary(layer, encoding.attention_mask)
    np.testing.assert_array_equal(layer, before)
    # The float32 entropy of every row, bit for bit as -(w · log w) summed, its mean per head.
    rows = layer[0]
    np.testing.assert_array_equal(summary["entropy"],
                                  (-(rows * np.log(np.clip(rows, 1e-12, None))).sum(axis=-1)).mean(axis=-1))


def test_head_summary_leaves_padding_out():
    mask = np.array([[1, 1, 1, 0]])
    weights = np.zeros((1, 1, 4, 4))
    weights[0, 0, :, :3] = 1 / 3  # uniform over the three real tokens
    summary = head_summary(weights, mask)
    np.testing.assert_allclose(summary["entropy"], [math.log(3)])


@pytest.mark.parametrize("similarity", ["dot", "cosine"])
def test_neuron_view_rebuilds_the_row(similarity, tiny, encoding):
    trace = build_trace(tiny, encoding, TraceSettings(layer=1, head=3, scaling="linear", similarity=similarity))
    numbers = neuron_view(trace, 2)
    np.testing.assert_allclose(numbers.products.sum(axis=-1), numbers.dots, rtol=1e-6)
    np.testing.assert_allclose(numbers.dots, trace["scores"][0, 2], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(numbers.scaled, trace["scaled"][0, 2])
    np.testing.assert_array_equal(numbers.weights, trace["weights"][0, 2])
    softmax = np.exp(numbers.scaled - numbers.scaled.max())
    np.testing.assert_allclose(softmax / softmax.sum(), numbers.weights, atol=1e-6)
    if similarity == "cosine":
        np.testing.assert_allclose(np.linalg.norm(numbers.query), 1.0, rtol=1e-6)
        np.testing.assert_allclose(np.linalg.norm(numbers.keys, axis=-1), 1.0, rtol=1e-6)
        assert np.all(np.abs(numbers.dots) <= 1 + 1e-6)
    else:
        np.testing.assert_array_equal(numbers.query, trace["Q"][0, 2])
        np.testing.assert_array_equal(numbers.keys, trace["K"][0])


@pytest.mark.parametrize("similarity", ["dot", "cosine"])
def test_every_heads_neuron_view_is_each_heads_own(similarity, tiny, encoding):
    settings = TraceSettings(layer=1, head=0, scaling="linear", similarity=similarity)
    every_head = neuron_heads(build_trace(tiny, encoding, settings), [3, 1])
    assert every_head.heads == (3, 1)
    for place, head in enumerate(every_head.heads):
        trace = build_trace(tiny, encoding, dataclasses.replace(settings, head=head))
        for query in range(encoding.num_tokens):
            one = neuron_view(trace, query)
            np.testing.assert_allclose(every_head.queries[place, query], one.query, rtol=1e-6)
            np.testing.assert_allclose(every_head.keys[place], one.keys, rtol=1e-6)
            np.testing.assert_allclose(every_head.dots[place, query], one.dots, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(every_head.scaled[place, query], one.scaled, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(every_head.weights[place, query], one.weights, rtol=1e-6, atol=1e-7)


def test_neuron_view_rejects_a_token_past_the_end(tiny, encoding):
    trace = build_trace(tiny, encoding, TraceSettings())
    with pytest.raises(ValueError, match=f"query_index must be from 0 to {encoding.num_tokens - 1}; got 99"):
        neuron_view(trace, 99)


def test_row_entropy_is_zero_for_one_hot_rows_and_log_t_for_uniform_ones():
    rows = np.array([[1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0]])
    np.testing.assert_allclose(row_entropy(rows), [0.0, math.log(4), math.log(2)], atol=1e-9)


def test_head_entropies_and_the_mean_of_heads_are_read_off_every_head(tiny, encoding):
    trace = build_trace(tiny, encoding, TraceSettings(layer=1))
    every_head = head_weights(trace)  # (1, nh, T, T)
    np.testing.assert_array_equal(head_entropies(trace), head_summary(every_head, trace["attention_mask"])["entropy"])
    np.testing.assert_allclose(mean_of_heads(trace)[:, 0], every_head.mean(axis=1), atol=1e-7)
    np.testing.assert_allclose(mean_of_heads(trace).sum(axis=-1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("stage", ["scores", "scaled", "masked", "weights", "context"])
def test_every_stage_of_every_head_is_each_heads_trace(stage, tiny, encoding):
    settings = TraceSettings(layer=1, scaling="temperature", temperature=0.7)
    every_head = head_stage(build_trace(tiny, encoding, settings), stage)  # (1, nh, T, T or d)
    for head in range(settings.num_heads(tiny.shape)):
        one = build_trace(tiny, encoding, dataclasses.replace(settings, head=head))
        np.testing.assert_allclose(every_head[:, head], one[stage], atol=1e-6)
    with pytest.raises(ValueError, match="stage must be one of scores, scaled, masked, weights, context, moved; "
                                         "got 'V'"):
        head_stage(build_trace(tiny, encoding, settings), "V")
