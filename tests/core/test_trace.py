"""The trace's shape logic, scaling, masking and head switches, on the tiny random BERT.

Shapes: B batch, T tokens, C hidden size, nh heads, d head size.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.dissect.trace import build_trace
from attention.stages.dot_product import MASKED_SCORE, additive_mask, attend, attend_in_chunks
from attention.stages.settings import SCALINGS, SOURCES, TraceSettings
from attention.text.encoding import encode, encode_batch

SHORT = "time flies like an arrow"
LONG = "I am looking for a hot job and a warm flat near the river"
TEMPERATURE = 0.37


@pytest.fixture(scope="module")
def encoding(tiny):
    return encode(tiny, SHORT)


@pytest.fixture(scope="module")
def padded(tiny):
    """The short text padded up to the long one, first in the batch."""
    return encode_batch(tiny, [(SHORT, None), (LONG, None)])


def natural(source: str) -> TraceSettings:
    return TraceSettings(source=source, layer=1, head=0)


def expected_shapes(batch: int, tokens: int, hidden: int, heads: int, size: int) -> dict[str, tuple[int, ...]]:
    width = heads * size  # nh·d
    shapes = {
        "input_ids": (batch, tokens), "token_type_ids": (batch, tokens), "attention_mask": (batch, tokens),
        "token embeddings": (batch, tokens, hidden), "segment embeddings": (batch, tokens, hidden),
        "position embeddings": (batch, tokens, hidden), "embeddings": (batch, tokens, hidden),
        "layer_input": (batch, tokens, hidden),
        "context (all heads)": (batch, heads, tokens, size), "concat": (batch, tokens, width),
        "output": (batch, tokens, hidden),
    }
    for letter in "QKV":
        shapes[f"{letter} (all heads)"] = (batch, tokens, width)
        shapes[f"{letter} split"] = (batch, heads, tokens, size)
        shapes[letter] = (batch, tokens, size)
    for name in ("scores", "scaled", "masked", "weights"):
        shapes[name] = (batch, tokens, tokens)
    shapes["context"] = (batch, tokens, size)
    return shapes


def assert_shapes(trace, expected: dict[str, tuple[int, ...]]) -> None:
    actual = {step.name: step.shape for step in trace.steps}
    assert actual == expected


def test_identity_is_one_head_of_size_c(tiny, padded):
    hidden = tiny.shape.hidden_size
    trace = build_trace(tiny, padded, natural("identity"))
    assert (trace.num_heads, trace.head_size) == (1, hidden)
    assert_shapes(trace, expected_shapes(2, padded.num_tokens, hidden, 1, hidden))
    for letter in "QKV":
        np.testing.assert_array_equal(trace[letter], trace["layer_input"])
    np.testing.assert_array_equal(trace["output"], trace["concat"])


def test_random_heads_of_every_size_from_1_to_c(tiny, padded):
    hidden = tiny.shape.hidden_size
    assert hidden == 32
    for size in range(1, hidden + 1):
        heads = hidden // size
        for head in {0, heads - 1}:
            trace = build_trace(tiny, padded, TraceSettings(source="random", head_dim=size, head=head))
            assert (trace.num_heads, trace.head_size) == (heads, size), size
            assert_shapes(trace, expected_shapes(2, padded.num_tokens, hidden, heads, size))


def test_bert_uses_the_models_heads(tiny, padded):
    shape = tiny.shape
    for layer in range(shape.num_layers):
        for head in range(shape.num_heads):
            trace = build_trace(tiny, padded, TraceSettings(layer=layer, head=head))
            assert (trace.num_heads, trace.head_size) == (4, 8)
            expected = expected_shapes(2, padded.num_tokens, 32, 4, 8)
            expected["attention output"] = (2, padded.num_tokens, 32)
            assert_shapes(trace, expected)
    assert trace.names[-1] == "attention output"


def test_the_steps_come_in_the_order_they_happen(tiny, encoding):
    names = build_trace(tiny, encoding, natural("bert")).names
    order = ["input_ids", "embeddings", "layer_input", "Q (all heads)", "Q split", "Q", "scores", "scaled",
             "masked", "weights", "context", "context (all heads)", "concat", "output", "attention output"]
    assert [names.index(name) for name in order] == sorted(names.index(name) for name in order)


def test_the_trace_carries_the_encodings_tokens(tiny, padded):
    trace = build_trace(tiny, padded, natural("bert"))
    assert trace.tokens == padded.tokens
    assert trace.dropped_tokens == padded.dropped_tokens
    with pytest.raises(KeyError, match="weights"):
        trace["no such step"]


def test_the_layer_input_is_that_layers_hidden_state(tiny, encoding):
    for layer in range(tiny.shape.num_layers):
        trace = build_trace(tiny, encoding, TraceSettings(layer=layer))
        np.testing.assert_array_equal(trace["layer_input"], encoding.hidden_states[layer])


def test_random_projections_come_from_the_seed(tiny, encoding):
    settings = TraceSettings(source="random", head_dim=4, head=2, seed=7)
    torch.manual_seed(1)
    state = torch.get_rng_state()
    first = build_trace(tiny, encoding, settings)
    assert torch.equal(torch.get_rng_state(), state), "the trace must not draw from the global generator"
    torch.manual_seed(2)
    again = build_trace(tiny, encoding, settings)
    other = build_trace(tiny, encoding, TraceSettings(source="random", head_dim=4, head=2, seed=8))
    for name in ("Q (all heads)", "K (all heads)", "V (all heads)", "weights", "output"):
        np.testing.assert_array_equal(first[name], again[name])
        assert not np.allclose(first[name], other[name]), name


def test_random_projections_keep_nn_linear_scale(tiny, encoding):
    trace = build_trace(tiny, encoding, TraceSettings(source="random", head_dim=8))
    hidden = tiny.shape.hidden_size
    layer_input = torch.from_numpy(trace["layer_input"])
    query = torch.tensor(trace["Q (all heads)"])
    # |W x + b| <= (|x|_1 + 1) / sqrt(C) for weights and biases in U(-1/sqrt(C), 1/sqrt(C)).
    bound = (layer_input.abs().sum(-1, keepdim=True) + 1) / hidden**0.5
    assert bool((query.abs() <= bound + 1e-5).all())


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("scaling", SCALINGS)
def test_scaling_divides_by_exactly_what_it_says(tiny, padded, source, scaling):
    settings = TraceSettings(source=source, head_dim=5 if source == "random" else None,
                             scaling=scaling, temperature=TEMPERATURE)
    trace = build_trace(tiny, padded, settings)
    size = trace.head_size
    expected = {"none": 1.0, "sqrt": size**0.5, "linear": float(size), "temperature": TEMPERATURE}[scaling]
    assert trace.divisor == expected
    np.testing.assert_array_equal(trace["scaled"], trace["scores"] / expected)


@pytest.mark.parametrize("source", SOURCES)
def test_cosine_scores_stay_between_minus_one_and_one(tiny, padded, source):
    trace = build_trace(tiny, padded, TraceSettings(source=source, similarity="cosine", scaling="none"))
    scores = trace["scores"]
    assert scores.min() >= -1 and scores.max() <= 1
    query, key = trace["Q"], trace["K"]
    unit_q = query / np.linalg.norm(query, axis=-1, keepdims=True)
    unit_k = key / np.linalg.norm(key, axis=-1, keepdims=True)
    np.testing.assert_allclose(scores, unit_q @ unit_k.transpose(0, 2, 1), atol=1e-6)
    if source == "identity":
        np.testing.assert_allclose(np.diagonal(scores, axis1=1, axis2=2), 1.0, atol=1e-6)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("scaling", SCALINGS)
@pytest.mark.parametrize("similarity", ["dot", "cosine"])
def test_weights_are_probabilities_over_the_keys(tiny, padded, source, scaling, similarity):
    settings = TraceSettings(source=source, scaling=scaling, similarity=similarity, temperature=TEMPERATURE)
    weights = build_trace(tiny, padded, settings)["weights"]
    assert np.isfinite(weights).all() and weights.min() >= 0
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("source", SOURCES)
def test_padding_keys_get_exactly_zero_weight(tiny, padded, source):
    padding = ~padded.attention_mask[0].astype(bool)  # (T,) the short text's padding
    assert padding.sum() > 0
    for scaling in SCALINGS:
        trace = build_trace(tiny, padded, TraceSettings(source=source, scaling=scaling, temperature=TEMPERATURE))
        assert np.all(trace["weights"][0][:, padding] == 0.0), scaling
        assert np.all(trace["masked"][0][:, padding] == MASKED_SCORE), scaling
        np.testing.assert_array_equal(trace["masked"][:, :, ~padding], trace["scaled"][:, :, ~padding])


@pytest.mark.parametrize("source", SOURCES)
def test_the_short_text_attends_the_same_alone_and_padded(tiny, encoding, padded, source):
    length = encoding.num_tokens
    for layer in range(tiny.shape.num_layers):
        settings = TraceSettings(source=source, layer=layer, head=0, head_dim=4 if source == "random" else None)
        alone, batched = build_trace(tiny, encoding, settings), build_trace(tiny, padded, settings)
        np.testing.assert_allclose(batched["weights"][0, :length, :length], alone["weights"][0], rtol=0, atol=1e-6)
        np.testing.assert_allclose(batched["output"][0, :length], alone["output"][0], rtol=0, atol=1e-5)


@pytest.mark.parametrize(("source", "head_dim"), [("bert", None), ("random", 8), ("random", 3), ("identity", None)])
def test_heads_off_zeroes_exactly_that_heads_slice(tiny, padded, source, head_dim):
    on = build_trace(tiny, padded, TraceSettings(source=source, head_dim=head_dim))
    size, heads = on.head_size, on.num_heads
    for off in sorted({0, heads - 1, heads // 2}):
        trace = build_trace(tiny, padded, TraceSettings(source=source, head_dim=head_dim, head=off, heads_off=(off,)))
        concat, reference = trace["concat"], on["concat"]
        switched = np.zeros(concat.shape[-1], dtype=bool)
        switched[off * size:(off + 1) * size] = True
        assert np.all(concat[..., switched] == 0.0)
        np.testing.assert_array_equal(concat[..., ~switched], reference[..., ~switched])
        assert np.all(trace["context (all heads)"][:, off] == 0.0)
        np.testing.assert_array_equal(trace["weights"], build_trace(
            tiny, padded, TraceSettings(source=source, head_dim=head_dim, head=off))["weights"])


def test_several_heads_off_at_once(tiny, padded):
    trace = build_trace(tiny, padded, TraceSettings(heads_off=(1, 3)))
    per_head = trace["context (all heads)"]  # (B, nh, T, d)
    assert np.all(per_head[:, [1, 3]] == 0.0)
    assert np.abs(per_head[:, [0, 2]]).max() > 0
    assert np.all(trace["concat"][..., 8:16] == 0.0) and np.all(trace["concat"][..., 24:32] == 0.0)


@pytest.mark.parametrize("source", SOURCES)
def test_context_is_weights_times_values(tiny, padded, source):
    head_dim = 16 if source == "random" else None
    for head in (0, 1) if source != "identity" else (0,):
        trace = build_trace(tiny, padded, TraceSettings(source=source, head=head, head_dim=head_dim))
        np.testing.assert_allclose(trace["context"], trace["weights"] @ trace["V"], atol=1e-6)
        np.testing.assert_allclose(trace["context (all heads)"][:, head], trace["context"], atol=1e-6)
        np.testing.assert_array_equal(trace["Q"], trace["Q split"][:, head])
        per_head = trace["context (all heads)"]  # (B, nh, T, d)
        batch, heads, tokens, size = per_head.shape
        side_by_side = per_head.transpose(0, 2, 1, 3).reshape(batch, tokens, heads * size)  # (B, T, nh·d)
        np.testing.assert_array_equal(trace["concat"], side_by_side)


def test_attend_in_chunks_matches_attending_all_heads_at_once():
    generator = torch.Generator().manual_seed(3)
    query, key, value = (torch.randn(2, 7, 11, 3, generator=generator) for _ in range(3))  # (B, nh, T, d)
    keep = torch.ones(2, 11)  # (B, T)
    keep[0, 6:] = 0
    mask = additive_mask(keep)  # (B, 1, T)
    whole = attend(query, key, value, mask[:, None], 3**0.5).context  # (B, nh, T, d)
    for max_elements in (1, 2 * 11 * 11, 3 * 2 * 11 * 11, 10**9):  # 1 head, 1 head, 3 heads (uneven), all
        chunked = attend_in_chunks(query, key, value, mask, 3**0.5, max_elements=max_elements)
        np.testing.assert_allclose(chunked.numpy(), whole.numpy(), rtol=0, atol=1e-6)


def test_head_dim_one_on_a_long_text_goes_through_the_chunks(bundled):
    """384 heads of size 1 over 512 tokens: nh·T·T is 6 times the chunk limit."""
    encoding = encode(bundled, " ".join(["word"] * 600))
    trace = build_trace(bundled, encoding, TraceSettings(source="random", head_dim=1, head=200, seed=3))
    per_head = torch.tensor(trace["context (all heads)"])  # (1, 384, 512, 1)
    assert tuple(per_head.shape) == (1, 384, 512, 1)
    assert per_head.shape[1] * 512 * 512 > 2**24
    query, key, value = (torch.tensor(trace[f"{letter} split"]) for letter in "QKV")  # (1, 384, 512, 1)
    chunk = 2**24 // (512 * 512)  # heads per chunk
    edges = {h for start in range(0, 384, chunk) for h in (start - 1, start, start + 1) if 0 <= h < 384}
    for head in sorted(edges | {200}):
        alone = attend(query[:, head], key[:, head], value[:, head], None, trace.divisor).context  # (1, 512, 1)
        np.testing.assert_allclose(per_head[:, head].numpy(), alone.numpy(), rtol=1e-5, atol=1e-6, err_msg=str(head))
    np.testing.assert_allclose(trace["context"], trace["context (all heads)"][:, 200], atol=1e-6)
    assert np.isfinite(trace["output"]).all()


def test_moving_layer_head_or_scaling_never_runs_the_model_again(tiny):
    calls = {"model": 0, "encoder": 0}

    def count(name):
        def hook(*_):
            calls[name] += 1
        return hook

    handles = [tiny.model.register_forward_hook(count("model")),
               tiny.model.encoder.register_forward_hook(count("encoder"))]
    try:
        encoding = encode(tiny, SHORT, "fruit flies like a banana")
        assert calls == {"model": 1, "encoder": 1}
        for layer in range(tiny.shape.num_layers):
            for head in range(tiny.shape.num_heads):
                for scaling in SCALINGS:
                    build_trace(tiny, encoding, TraceSettings(layer=layer, head=head, scaling=scaling))
        for source, head_dim in (("identity", None), ("random", 1), ("random", 7), ("bert", 8)):
            build_trace(tiny, encoding, TraceSettings(source=source, head_dim=head_dim, similarity="cosine"))
        build_trace(tiny, encoding, TraceSettings(heads_off=(0, 2)))
    finally:
        for handle in handles:
            handle.remove()
    assert calls == {"model": 1, "encoder": 1}
