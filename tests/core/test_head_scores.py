"""The heads' scores on attention whose answer is known: a pure previous-token head, a pure induction head, causal
uniform attention, mixtures; TransformerLens's head detector's own patterns for comparison; the events read off
scores over training."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.analyses.head_scores import (
    INDUCTION_THRESHOLD,
    HeadEvent,
    first_crossings,
    induction_score,
    previous_token_score,
)

N = 6  # the probe: 6 tokens, then the same 6 again
T = 2 * N


def previous_token_head(tokens: int = T) -> torch.Tensor:
    """(T, T): every query on the token before it (the first, which has none, on itself)."""
    weights = torch.zeros(tokens, tokens)
    weights[0, 0] = 1.0
    weights[torch.arange(1, tokens), torch.arange(tokens - 1)] = 1.0
    return weights


def induction_head(n: int = N) -> torch.Tensor:
    """(2n, 2n): the second half's queries on the token after their token's first occurrence, i − n + 1; the first
    half's, which have seen no repeat, on themselves."""
    weights = torch.zeros(2 * n, 2 * n)
    weights[torch.arange(n), torch.arange(n)] = 1.0
    queries = torch.arange(n, 2 * n)
    weights[queries, queries - n + 1] = 1.0
    return weights


def uniform_causal(tokens: int = T) -> torch.Tensor:
    """(T, T): every query spread evenly over itself and the tokens before it."""
    return torch.tril(torch.ones(tokens, tokens)) / torch.arange(1, tokens + 1)[:, None]


def test_a_pure_previous_token_head_scores_1_and_0_as_an_induction_head():
    assert float(previous_token_score(previous_token_head())) == pytest.approx(1.0)
    assert float(induction_score(previous_token_head())) == pytest.approx(0.0)


def test_a_pure_induction_head_scores_1_and_0_as_a_previous_token_head():
    assert float(induction_score(induction_head())) == pytest.approx(1.0)
    assert float(previous_token_score(induction_head())) == pytest.approx(0.0)


def test_uniform_causal_attention_scores_the_mean_of_1_over_i_plus_1_along_each_stripe():
    weights = uniform_causal()
    expected_previous = np.mean([1 / (i + 1) for i in range(1, T)])
    expected_induction = np.mean([1 / (i + 1) for i in range(N, T)])
    assert float(previous_token_score(weights)) == pytest.approx(expected_previous)
    assert float(induction_score(weights)) == pytest.approx(expected_induction)


def test_a_head_that_gives_the_stripe_a_share_scores_that_share():
    for share in (0.25, 0.5, 0.9):
        mixed = share * induction_head() + (1 - share) * uniform_causal()
        expected = share + (1 - share) * np.mean([1 / (i + 1) for i in range(N, T)])
        assert float(induction_score(mixed)) == pytest.approx(expected)


def test_the_scores_keep_the_leading_dimensions_batch_and_heads():
    heads = torch.stack([previous_token_head(), induction_head(), uniform_causal()])  # (3, T, T)
    stacked = torch.stack([heads] * 4)  # (4, 3, T, T)
    assert previous_token_score(stacked).shape == (4, 3)
    torch.testing.assert_close(induction_score(stacked)[0, :2], torch.tensor([0.0, 1.0]))


def test_an_induction_score_needs_a_sequence_repeated_once():
    with pytest.raises(ValueError, match="even length"):
        induction_score(torch.zeros(7, 7))
    with pytest.raises(ValueError, match="2 tokens"):
        previous_token_score(torch.ones(1, 1))


# TransformerLens's head detector (transformer_lens/head_detector.py), its patterns written out again here: a 1 where
# the head is expected to look. Its "mul" measure is sum(α ∘ pattern) / sum(α), over every row.
def detector_previous_token_pattern(tokens: int) -> torch.Tensor:
    pattern = torch.zeros(tokens, tokens)
    pattern[1:, :-1] = torch.eye(tokens - 1)
    return torch.tril(pattern)


def detector_induction_pattern(sequence: torch.Tensor) -> torch.Tensor:
    duplicates = (sequence[None, :] == sequence[:, None]).float()
    duplicates.fill_diagonal_(0)  # a token is no duplicate of itself
    duplicates = torch.tril(duplicates)
    shifted = torch.roll(duplicates, shifts=1, dims=1)  # the token after each earlier occurrence
    shifted[:, 0] = 0
    return torch.tril(shifted)


def detector_mul_score(weights: torch.Tensor, pattern: torch.Tensor) -> float:
    return float((weights * pattern).sum() / weights.sum())


@pytest.mark.parametrize("seed", range(5))
def test_the_scores_are_the_head_detectors_over_the_rows_its_pattern_covers(seed):
    """On n distinct tokens repeated once, the detector's induction pattern is the stripe α[i, i − n + 1] of the
    second half: its score over all 2n rows is this one's times n / 2n; its previous-token score over all T rows
    is this one's times (T − 1) / T."""
    generator = torch.Generator().manual_seed(seed)
    first = torch.randperm(20, generator=generator)[:N]
    sequence = torch.cat([first, first])  # (2n,)
    weights = torch.softmax(torch.randn(T, T, generator=generator) * 3 + torch.triu(torch.full((T, T), -1e9), 1), -1)
    pattern = detector_induction_pattern(sequence)
    assert torch.equal(pattern.nonzero(), torch.stack([torch.arange(N, T), torch.arange(1, N + 1)], dim=1))
    assert detector_mul_score(weights, pattern) == pytest.approx(float(induction_score(weights)) * N / T, rel=1e-5)
    assert detector_mul_score(weights, detector_previous_token_pattern(T)) == pytest.approx(
        float(previous_token_score(weights)) * (T - 1) / T, rel=1e-5)


def test_a_head_becomes_one_at_the_first_measured_step_its_score_reaches_the_threshold():
    steps = np.array([0, 20, 40, 60, 80])
    scores = np.zeros((5, 2, 3), dtype=np.float32)  # (M, L, nh)
    scores[:, 1, 2] = [0.1, 0.2, 0.55, 0.45, 0.8]  # crosses at 40, dips, stays the event at 40
    scores[:, 0, 1] = [0.0, 0.0, 0.0, 0.0, INDUCTION_THRESHOLD]  # exactly at the threshold counts
    events = first_crossings(2, "induction", steps, scores)
    assert events == [HeadEvent(2, 1, 2, "induction", 40, pytest.approx(0.55)),
                      HeadEvent(2, 0, 1, "induction", 80, INDUCTION_THRESHOLD)]
    assert str(events[0]) == "layer 1, head 2 became an induction head at step 40"
    assert not first_crossings(1, "previous_token", steps, np.full((5, 1, 4), 0.3))
