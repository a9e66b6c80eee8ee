"""Properties of attend() that must hold for any shapes, divisors, similarities and padding.

Shapes: B batch, nh heads, T tokens, d head size. Tensors are drawn from a seed
(fast to generate, still shrinkable); masks are drawn element by element.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention.stages.dot_product import MASKED_SCORE, additive_mask, attend, attend_in_chunks

PROPERTY_SETTINGS = settings(max_examples=50, deadline=None)


@st.composite
def attention_inputs(draw, per_query_mask: bool = False, with_heads: bool = False):
    """q, k, v of shape (B, [nh,] T, d), a mask keeping at least one key per row, a divisor, a similarity."""
    batch = draw(st.integers(1, 4))
    heads = draw(st.integers(1, 3)) if with_heads else None
    tokens = draw(st.integers(1, 12))
    size = draw(st.integers(1, 16))
    scale = draw(st.floats(0.01, 10.0))
    divisor = draw(st.sampled_from([1.0, size**0.5, float(size)]) | st.floats(0.05, 100.0))
    similarity = draw(st.sampled_from(["dot", "cosine"]))
    generator = torch.Generator().manual_seed(draw(st.integers(0, 2**32 - 1)))
    lead = (batch,) if heads is None else (batch, heads)
    query, key, value = (scale * torch.randn(*lead, tokens, size, generator=generator) for _ in range(3))

    rows = batch * tokens if per_query_mask else batch  # one key mask per query, or per text
    keep = torch.tensor([draw(st.lists(st.booleans(), min_size=tokens, max_size=tokens)) for _ in range(rows)])
    forced = [draw(st.integers(0, tokens - 1)) for _ in range(rows)]
    keep[torch.arange(rows), torch.tensor(forced)] = True  # at least one real key per row
    if per_query_mask:
        keep = keep.view(batch, tokens, tokens)  # (B, T queries, T keys)
        mask = torch.where(keep, 0.0, MASKED_SCORE)  # (B, T, T)
    else:
        mask = additive_mask(keep)  # (B, 1, T)
        keep = keep[:, None, :].expand(batch, tokens, tokens)  # (B, T, T)
    if heads is not None:
        mask, keep = mask[:, None], keep[:, None].expand(batch, heads, tokens, tokens)  # (B, 1|nh, T|1, T)
    return query, key, value, mask, keep, divisor, similarity


def check_stages(stages, value: torch.Tensor, keep: torch.Tensor, divisor: float, similarity: str) -> None:
    weights = stages.weights
    assert torch.isfinite(weights).all()
    assert bool((weights >= 0).all())
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]), rtol=0, atol=1e-5)
    assert bool((weights[~keep] == 0).all()), "a masked key got weight"
    assert torch.equal(stages.scaled, stages.scores / divisor)
    assert torch.equal(stages.masked[keep], stages.scaled[keep])
    if similarity == "cosine":
        assert stages.scores.abs().max() <= 1 + 1e-6
    torch.testing.assert_close(stages.context, weights @ value, rtol=1e-5, atol=1e-5)


@PROPERTY_SETTINGS
@given(attention_inputs())
def test_weights_are_finite_probabilities_that_ignore_padding(inputs):
    query, key, value, mask, keep, divisor, similarity = inputs
    check_stages(attend(query, key, value, mask, divisor, similarity), value, keep, divisor, similarity)


@PROPERTY_SETTINGS
@given(attention_inputs(per_query_mask=True))
def test_a_separate_mask_for_every_query_is_respected(inputs):
    query, key, value, mask, keep, divisor, similarity = inputs
    check_stages(attend(query, key, value, mask, divisor, similarity), value, keep, divisor, similarity)


@PROPERTY_SETTINGS
@given(attention_inputs(with_heads=True))
def test_many_heads_at_once_behave_like_one(inputs):
    query, key, value, mask, keep, divisor, similarity = inputs
    stages = attend(query, key, value, mask, divisor, similarity)
    check_stages(stages, value, keep, divisor, similarity)
    for head in range(query.shape[1]):
        alone = attend(query[:, head], key[:, head], value[:, head], mask[:, 0], divisor, similarity)
        torch.testing.assert_close(stages.weights[:, head], alone.weights, rtol=1e-5, atol=1e-6)


@PROPERTY_SETTINGS
@given(attention_inputs(), st.data())
def test_a_row_does_not_depend_on_the_batch_it_sits_in(inputs, data):
    query, key, value, mask, _, divisor, similarity = inputs
    batch = query.shape[0]
    row = data.draw(st.integers(0, batch - 1))
    together = attend(query, key, value, mask, divisor, similarity)
    alone = attend(query[row:row + 1], key[row:row + 1], value[row:row + 1], mask[row:row + 1], divisor, similarity)
    torch.testing.assert_close(together.weights[row:row + 1], alone.weights, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(together.context[row:row + 1], alone.context, rtol=1e-5, atol=1e-5)

    # Other rows' content, however wild, changes nothing in this one.
    others = torch.arange(batch) != row
    noisy_key, noisy_value = key.clone(), value.clone()
    noisy_key[others] *= 1000.0
    noisy_value[others] = -noisy_value[others]
    disturbed = attend(query, noisy_key, noisy_value, mask, divisor, similarity)
    torch.testing.assert_close(disturbed.weights[row], together.weights[row], rtol=1e-5, atol=1e-6)


@PROPERTY_SETTINGS
@given(attention_inputs(with_heads=True), st.integers(1, 3 * 12 * 12 * 4))
def test_attending_in_chunks_changes_nothing(inputs, max_elements):
    query, key, value, mask, _, divisor, similarity = inputs
    whole = attend(query, key, value, mask, divisor, similarity).context  # (B, nh, T, d)
    chunked = attend_in_chunks(query, key, value, mask[:, 0], divisor, similarity, max_elements=max_elements)
    # A context is a weighted sum of values: summed in other blocks, its float32 rounding is a part of their size
    # (up to 10 here), not of its own (a sum near 0 of values of 5 was 1.8e-6 off on an AMD EPYC).
    torch.testing.assert_close(chunked, whole, rtol=1e-5, atol=1e-6 * max(1.0, value.abs().max().item()))


def test_a_single_real_key_takes_all_the_weight():
    query, key, value = (torch.randn(1, 5, 4) for _ in range(3))
    mask = additive_mask(torch.tensor([[0, 0, 1, 0, 0]]))  # (1, 1, 5)
    weights = attend(query, key, value, mask, 2.0).weights  # (1, 5, 5)
    np.testing.assert_array_equal(weights.numpy(), np.tile([0.0, 0.0, 1.0, 0.0, 0.0], (1, 5, 1)))
