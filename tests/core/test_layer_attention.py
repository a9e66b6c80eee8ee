"""Every head of a layer computed once (LayerAttention): against each head computed alone, the chunked
context of every head, transformers' own weights, and the traces made of it.

Shapes: B batch, T tokens, C hidden size, nh heads, d head size.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from attention.dissect.heads import HEAD_STAGES, head_stage, head_weights
from attention.dissect.parity import transformers_weights
from attention.dissect.trace import build_trace, layer_attention, layer_projections, projections_for
from attention.stages.dot_product import additive_mask, attend, attend_in_chunks
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode, encode_batch

TOLERANCE = 1e-5  # float32 against transformers, as tests/core/test_parity.py
SETTINGS = {
    "bert": TraceSettings(layer=1),
    "random": TraceSettings(source="random", head_dim=5, seed=4),
    "identity": TraceSettings(source="identity"),
    "cosine, τ": TraceSettings(layer=1, similarity="cosine", scaling="temperature", temperature=0.4),
    "heads off": TraceSettings(layer=1, heads_off=(0, 2)),
}


@pytest.fixture(scope="module")
def padded(tiny):
    return encode_batch(tiny, [("time flies like an arrow", None),
                               ("I am looking for a hot job and a warm flat near the river", None)])


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_every_heads_weights_are_that_heads_own(tiny, padded, settings):
    layer = layer_attention(tiny, padded, settings)
    mask = additive_mask(torch.from_numpy(padded.attention_mask))  # (B, 1, T)
    for head in range(layer.num_heads):
        query, key, value = (torch.tensor(layer.split(letter)[:, head]) for letter in "QKV")  # (B, T, d) copies
        alone = attend(query, key, value, mask, layer.divisor, settings.similarity)
        np.testing.assert_allclose(layer.weights[:, head], alone.weights.numpy(), rtol=1e-5, atol=1e-6)
        expected_context = 0.0 * alone.context if head in settings.heads_off else alone.context
        np.testing.assert_allclose(layer.context[:, head], expected_context.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_the_context_is_what_attending_in_chunks_gives(tiny, padded, settings):
    """attend_in_chunks made every head's context before the weights were kept: the same numbers, bit for bit."""
    layer = layer_attention(tiny, padded, settings)
    mask = additive_mask(torch.from_numpy(padded.attention_mask))  # (B, 1, T)
    heads = [torch.tensor(layer.split(letter)) for letter in "QKV"]  # (B, nh, T, d) copies
    chunked = attend_in_chunks(*heads, mask, layer.divisor, settings.similarity).numpy()  # (B, nh, T, d)
    chunked[:, list(settings.heads_off)] = 0.0
    np.testing.assert_array_equal(layer.context, chunked)


def test_the_weights_are_transformers_own_on_the_real_model(bundled):
    encoding = encode(bundled, "I am looking for a hot job", "The bakery down the street is hiring.")
    for layer_index in range(bundled.shape.num_layers):
        layer = layer_attention(bundled, encoding, TraceSettings(layer=layer_index))
        theirs = transformers_weights(bundled, encoding, layer_index)  # (B, nh, T, T)
        assert layer.weights.shape == theirs.shape
        assert np.abs(layer.weights - theirs).max() <= TOLERANCE, f"layer {layer_index}"


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_a_trace_made_from_the_layer_is_the_trace_made_alone(tiny, padded, settings):
    layer = layer_attention(tiny, padded, settings)
    for head in sorted({0, layer.num_heads - 1}):
        at_head = TraceSettings(**{**vars(settings), "head": head})
        shared, alone = build_trace(tiny, padded, at_head, layer), build_trace(tiny, padded, at_head)
        assert shared.names == alone.names
        for ours, theirs in zip(shared.steps, alone.steps, strict=True):
            assert ours.formula == theirs.formula, ours.name
            np.testing.assert_array_equal(ours.value, theirs.value, err_msg=ours.name)
        np.testing.assert_allclose(shared["weights"], layer.weights[:, head], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("stage", HEAD_STAGES)
def test_every_stage_read_off_the_layer_is_the_one_read_off_a_trace(tiny, padded, stage):
    settings = SETTINGS["cosine, τ"]
    layer = layer_attention(tiny, padded, settings)
    without_weights = layer_attention(tiny, padded, settings, keep_weights=False)
    trace = build_trace(tiny, padded, settings, layer)
    output = projections_for(tiny, settings).output  # W_O, which what moves is measured through
    for heads in (None, [3, 1]):
        from_trace = head_stage(trace, stage, heads, output=output)
        np.testing.assert_array_equal(head_stage(layer, stage, heads, output=output), from_trace)
        np.testing.assert_array_equal(head_stage(without_weights, stage, heads, output=output), from_trace)


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_a_few_heads_from_the_projections_alone_are_those_of_the_whole_layer(tiny, padded, settings):
    layer, projections = layer_attention(tiny, padded, settings), layer_projections(tiny, padded, settings)
    assert projections.weights is None and projections.concat is None, "no head attended"
    for letter in "QKV":
        np.testing.assert_array_equal(projections.projected[letter], layer.projected[letter])
    output = projections_for(tiny, settings).output
    for stage in HEAD_STAGES:
        for heads in ([layer.num_heads - 1], [3 % layer.num_heads, 1 % layer.num_heads], None):
            np.testing.assert_array_equal(head_stage(projections, stage, heads, output=output),
                                          head_stage(layer, stage, heads, output=output),
                                          err_msg=f"{stage} of heads {heads}")


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_a_trace_made_from_the_contexts_alone_is_the_same_trace(tiny, padded, settings):
    """The projections a trace makes again from the layer's input are the ones the layer made."""
    layer = layer_attention(tiny, padded, settings)
    at_head = TraceSettings(**{**vars(settings), "head": layer.num_heads - 1})
    whole, lean = build_trace(tiny, padded, at_head, layer), build_trace(tiny, padded, at_head, layer.contexts_only())
    for ours, theirs in zip(lean.steps, whole.steps, strict=True):
        np.testing.assert_array_equal(ours.value, theirs.value, err_msg=ours.name)
    with pytest.raises(ValueError, match="context"):
        head_stage(layer.contexts_only(), "scores")


def test_without_its_weights_the_layer_computes_them_again_and_keeps_the_rest(tiny, padded):
    layer = layer_attention(tiny, padded, SETTINGS["bert"])
    not_kept = layer_attention(tiny, padded, SETTINGS["bert"], keep_weights=False)
    assert not_kept.weights is None
    np.testing.assert_array_equal(head_weights(not_kept), layer.weights)
    np.testing.assert_array_equal(not_kept.concat, layer.concat)
    for letter in "QKV":
        np.testing.assert_array_equal(not_kept.projected[letter], layer.projected[letter])


def test_every_heads_kept_weights_are_handed_out_read_only_and_some_heads_as_a_copy(tiny, padded):
    layer = layer_attention(tiny, padded, SETTINGS["bert"])
    every_head = head_weights(layer)
    assert np.shares_memory(every_head, layer.weights), "the kept array, not a copy of it"
    assert not every_head.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        every_head[0, 0, 0, 0] = 1.0
    some = head_weights(layer, [2, 0])
    assert not np.shares_memory(some, layer.weights)
    np.testing.assert_array_equal(some, layer.weights[:, [2, 0]])


def test_the_split_heads_and_the_context_are_views_and_pickle_once(tiny, padded):
    """A cache pickles the layer: every number once (the projections, the concatenation, the weights)."""
    layer = layer_attention(tiny, padded, SETTINGS["bert"])
    for letter in "QKV":
        assert np.shares_memory(layer.split(letter), layer.projected[letter])
    assert np.shares_memory(layer.context, layer.concat)
    numbers = sum(array.nbytes for array in (*layer.projected.values(), layer.concat, layer.weights))
    assert numbers <= len(pickle.dumps(layer)) < numbers + 4096
    assert layer.concat.nbytes <= len(pickle.dumps(layer.contexts_only())) < layer.concat.nbytes + 4096


def test_identity_keeps_its_one_input_once(tiny, padded):
    """Q = K = V = X: one array under three names, pickled once."""
    layer = layer_attention(tiny, padded, SETTINGS["identity"], keep_weights=False)
    assert layer.projected["Q"] is layer.projected["K"] is layer.projected["V"]
    assert len(pickle.dumps(layer)) < 2 * layer.concat.nbytes + 4096


@pytest.mark.parametrize("settings", [SETTINGS["bert"], SETTINGS["identity"]], ids=["bert", "identity"])
def test_no_array_of_a_layer_can_be_written_to_and_what_was_handed_in_is_left_as_it_was(tiny, padded, settings):
    """A layer is shared by every session that asks for it (components/caches/layers.py): a write raises."""
    layer = layer_attention(tiny, padded, settings)
    arrays = {"attention_mask": layer.attention_mask, "concat": layer.concat, "context": layer.context,
              "weights": layer.weights, **{letter: layer.projected[letter] for letter in "QKV"},
              **{f"{letter} split": layer.split(letter) for letter in "QKV"}}
    for name, array in arrays.items():
        before = array.copy()
        with pytest.raises(ValueError, match="read-only"):
            array[(0,) * array.ndim] = 7
        np.testing.assert_array_equal(array, before, err_msg=name)
    for made in (layer.contexts_only(), layer_projections(tiny, padded, settings)):
        assert not made.attention_mask.flags.writeable
        assert not (made.concat if made.concat is not None else made.projected["Q"]).flags.writeable
    assert padded.attention_mask.flags.writeable, "the encoding's own mask is the encoding's to keep"
    if settings.source == "identity":  # Q, K and V are X: one array under three names, pickled once
        assert layer.projected["Q"] is layer.projected["K"] is layer.projected["V"]
