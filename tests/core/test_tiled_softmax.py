"""The tiled softmax (attention.stages.tiled_softmax) gives torch.softmax's weights and softmax(s) · V's context for
any row and block size, with very large scores and masked keys, and its record of steps adds up.

Shapes: T keys in the row, d head size. Rows are drawn from a seed (fast to generate, still shrinkable); the
rows of a real trace (the bundled BERT's, and the tiny GPT-2's under its causal mask) are held to 1e-6.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention.dissect.trace import build_trace
from attention.stages.dot_product import MASKED_SCORE
from attention.stages.settings import TraceSettings
from attention.stages.tiled_softmax import tiled_context, tiled_softmax
from attention.text.encoding import encode

PROPERTY_SETTINGS = settings(max_examples=200, deadline=None)


@st.composite
def score_rows(draw):
    """A float32 row (T,) of scores of any magnitude, some keys masked (-inf or MASKED_SCORE), and a block size:
    1, T, one that does not divide T, or any."""
    tokens = draw(st.integers(1, 40))
    scale = draw(st.sampled_from([1.0, 10.0, 1e3, 1e30]))  # 1e3 overflows exp(s) in float32; 1e30 overflows s · s
    generator = torch.Generator().manual_seed(draw(st.integers(0, 2**32 - 1)))
    row = torch.randn(tokens, generator=generator) * scale  # (T,)
    masked = draw(st.lists(st.integers(0, tokens - 1), max_size=tokens))
    masked_with = draw(st.sampled_from([-torch.inf, MASKED_SCORE]))
    row[masked] = masked_with
    if (row == -torch.inf).all():
        row[draw(st.integers(0, tokens - 1))] = 0.0  # one key kept: a row masked whole with -inf has no softmax
    not_dividing = [b for b in range(2, tokens) if tokens % b]
    block_size = draw(st.sampled_from([1, tokens, *not_dividing]) | st.integers(1, tokens))
    return row, block_size


@PROPERTY_SETTINGS
@given(score_rows())
def test_weights_are_torch_softmax(row_and_block):
    row, block_size = row_and_block
    result = tiled_softmax(row, block_size)
    assert result.weights.dtype == torch.float32 and result.weights.shape == row.shape
    assert torch.isfinite(result.weights).all(), "no overflow, however large the scores"
    torch.testing.assert_close(result.weights, torch.softmax(row, dim=-1))


@PROPERTY_SETTINGS
@given(score_rows(), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_context_is_softmax_times_values(row_and_block, size, seed):
    row, block_size = row_and_block
    values = torch.randn(row.shape[0], size, generator=torch.Generator().manual_seed(seed))  # (T, d)
    result = tiled_context(row, values, block_size)
    assert result.context.shape == (size,)
    torch.testing.assert_close(result.context, torch.softmax(row, dim=-1) @ values)
    torch.testing.assert_close(result.weights, torch.softmax(row, dim=-1))
    assert [step.softmax for step in result.steps] == list(tiled_softmax(row, block_size).steps)


@PROPERTY_SETTINGS
@given(score_rows())
def test_the_last_running_sum_is_the_whole_rows(row_and_block):
    row, block_size = row_and_block
    last = tiled_softmax(row, block_size).steps[-1]
    assert last.max_after == row.max().item()
    assert math.isclose(last.sum_after, torch.exp(row - row.max()).sum().item(), rel_tol=1e-5)


@PROPERTY_SETTINGS
@given(score_rows())
def test_each_step_follows_from_the_one_before(row_and_block):
    row, block_size = row_and_block
    steps = tiled_softmax(row, block_size).steps
    assert len(steps) == math.ceil(row.shape[0] / block_size)
    assert [key for step in steps for key in step.keys] == list(range(row.shape[0])), "every key once, in order"
    assert (steps[0].max_before, steps[0].sum_before) == (-math.inf, 0.0)
    for before, step in zip(steps, steps[1:], strict=False):
        assert (step.max_before, step.sum_before) == (before.max_after, before.sum_after)
    for step in steps:
        assert step.block_max == max(step.scores)
        assert step.max_after == max(step.max_before, step.block_max)
        assert 0.0 <= step.rescale <= 1.0
        if step.max_after == step.max_before:
            assert step.rescale == 1.0, "the max held: the sum so far stands"
        assert math.isclose(step.sum_after, step.sum_before * step.rescale + sum(step.exponentials),
                            rel_tol=1e-5, abs_tol=1e-30)


def test_a_larger_max_shrinks_the_sum_so_far():
    # Blocks of two: [0, 1] then [5, 2]. The second block's max 5 rescales the first's sum by exp(1 − 5).
    steps = tiled_softmax(torch.tensor([0.0, 1.0, 5.0, 2.0]), 2).steps
    assert (steps[0].max_after, steps[1].block_max, steps[1].max_after) == (1.0, 5.0, 5.0)
    assert steps[1].rescale == pytest.approx(math.exp(-4.0))
    assert steps[0].sum_after == pytest.approx(math.exp(-1.0) + 1.0)
    assert steps[1].sum_after == pytest.approx((math.exp(-1.0) + 1.0) * math.exp(-4.0) + 1.0 + math.exp(-3.0))


def test_a_numpy_row_keeps_its_float64():
    row = np.array([3.0, -1.0, 0.5, 700.0, 699.0])  # exp(700) is near float64's overflow; exp(710) is past it
    result = tiled_softmax(row, 2)
    assert result.weights.dtype == torch.float64
    torch.testing.assert_close(result.weights, torch.softmax(torch.from_numpy(row), dim=-1))


def test_keys_masked_with_minus_infinity_before_any_other_key_count_nothing():
    row = torch.tensor([-torch.inf, -torch.inf, 2.0, -torch.inf, 1.0])
    steps = tiled_softmax(row, 2).steps
    assert (steps[0].max_after, steps[0].rescale, steps[0].sum_after) == (-math.inf, 1.0, 0.0)
    torch.testing.assert_close(tiled_softmax(row, 2).weights, torch.softmax(row, dim=-1))


def test_a_row_masked_whole_with_the_cores_masked_score_is_uniform():
    row = torch.full((5,), MASKED_SCORE)
    torch.testing.assert_close(tiled_softmax(row, 2).weights, torch.full((5,), 0.2))


def test_the_records_are_frozen():
    result = tiled_softmax(torch.tensor([1.0, 2.0]), 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.steps[0].rescale = 1.0


@pytest.mark.parametrize("block_size", [0, -1, 6, 2.0, True, None])
def test_bad_block_sizes_name_the_range(block_size):
    with pytest.raises(ValueError, match="block_size must be an integer from 1 to 5"):
        tiled_softmax(torch.zeros(5), block_size)
    with pytest.raises(ValueError, match="from 1 to 5"):
        tiled_context(torch.zeros(5), torch.zeros(5, 3), block_size)


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        (torch.zeros(0), "at least one key"),
        (torch.zeros(2, 3), r"shape \(T,\)"),
        (torch.tensor([1.0, math.nan]), "finite or -inf"),
        (torch.tensor([1.0, math.inf]), "finite or -inf"),
        (torch.full((3,), -math.inf), "MASKED_SCORE"),
    ],
)
def test_rows_without_a_softmax_are_refused(scores, message):
    with pytest.raises(ValueError, match=message):
        tiled_softmax(scores, 1)


def test_values_must_have_a_row_per_key():
    with pytest.raises(ValueError, match=r"\(T, d\) with T = 3"):
        tiled_context(torch.zeros(3), torch.zeros(4, 2), 1)


REAL_TOLERANCE = 1e-6  # a real row's tiled weights and context against torch's, in float32


@pytest.mark.parametrize("model", ["bundled", "tiny_gpt2_model"])
def test_every_row_of_a_real_trace_is_torch_softmax_of_its_scores(model, request):
    """Every query row of a real head's masked scores (B, T, T), in blocks of 1, 3 and all the keys: the weights
    torch.softmax gives and the trace drew, and the trace's context row, each within 1e-6."""
    loaded = request.getfixturevalue(model)
    trace = build_trace(loaded, encode(loaded, "the cat sat on the mat because it was tired"),
                        TraceSettings(layer=0, head=0))  # rows whose max comes after their first key
    masked, values = torch.from_numpy(trace["masked"][0]), torch.from_numpy(trace["V"][0])  # (T, T), (T, d)
    weights, context = torch.from_numpy(trace["weights"][0]), torch.from_numpy(trace["context"][0])  # (T, T), (T, d)
    for block_size in (1, 3, masked.shape[0]):
        for query, row in enumerate(masked):
            tiled = tiled_context(row, values, block_size)
            assert (tiled.weights - torch.softmax(row, dim=-1)).abs().max() <= REAL_TOLERANCE
            assert (tiled.weights - weights[query]).abs().max() <= REAL_TOLERANCE
            assert (tiled.context - context[query]).abs().max() <= REAL_TOLERANCE
