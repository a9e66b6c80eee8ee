"""The core behind the lab and the teaching views: scaling_lab's softmax measurements, segments, context."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attention.analyses.context import find_token, similarity_by_layer
from attention.dissect.heads import head_summary, head_weights
from attention.dissect.trace import build_trace
from attention.labs.scaling_lab import (
    dot_product_variance,
    head_softmax_statistics,
    random_scores,
    random_scores_by_head_size,
    random_softmax_statistics,
    softmax_statistics,
    softmax_statistics_by_head_size,
    softmax_statistics_by_temperature,
    temperature_row,
    variance_by_head_size,
)
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from attention.text.segments import PAIR_FILTERS, renormalised, visible_tokens, visible_weights

# [CLS] A A [SEP] B B [SEP]: segment ids and the special-token mask of a sentence pair.
PAIR_TYPES = np.array([0, 0, 0, 0, 1, 1, 1])
PAIR_SPECIAL = np.array([True, False, False, True, False, False, True])


# softmax_statistics and temperature_row

@pytest.mark.parametrize("tokens", [1, 2, 7, 512])
def test_equal_scores_give_the_uniform_row(tokens):
    entropy, largest = softmax_statistics(np.full((3, tokens), 2.5), 1.0)
    assert entropy == pytest.approx(math.log(tokens), abs=1e-5)
    assert largest == pytest.approx(1 / tokens, rel=1e-5)


def test_one_dominant_score_gives_a_one_hot_row():
    entropy, largest = softmax_statistics(np.array([[100.0, 0.0, 0.0, 0.0]]), 1.0)
    assert entropy == pytest.approx(0.0, abs=1e-6)
    assert largest == pytest.approx(1.0)


def test_known_two_key_row_and_the_divisor():
    scores = np.array([[math.log(3.0), 0.0]])  # softmax -> (3/4, 1/4)
    entropy, largest = softmax_statistics(scores, 1.0)
    assert largest == pytest.approx(0.75, rel=1e-6)
    assert entropy == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)), rel=1e-6)
    assert softmax_statistics(scores * 4, 4.0) == pytest.approx((entropy, largest), rel=1e-6)


def test_statistics_accept_any_numpy_layout():
    scores = np.random.default_rng(0).normal(size=(5, 6)).astype(np.float32)
    reversed_columns = scores[:, ::-1]  # negative strides: torch.from_numpy refuses them
    read_only = scores.copy()
    read_only.flags.writeable = False
    expected = softmax_statistics(scores.copy(), 1.0)
    assert softmax_statistics(reversed_columns, 1.0) == pytest.approx(expected, rel=1e-6)
    assert softmax_statistics(read_only, 1.0) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("divisor", [0.0, -1.0, float("nan")])
def test_a_divisor_that_is_not_positive_is_refused(divisor):
    with pytest.raises(ValueError, match="positive"):
        softmax_statistics(np.zeros((1, 3)), divisor)


def test_temperature_rows_sum_to_one_and_sharpen_as_tau_falls():
    row = np.array([3.0, 1.0, 0.5, -2.0, 0.0])
    taus = [0.25, 0.5, 1.0, 2.0, 8.0, 100.0]
    weights = temperature_row(row, taus)
    assert weights.shape == (len(taus), len(row))
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-6)
    assert (np.diff(weights.max(axis=1)) < 0).all()
    np.testing.assert_allclose(weights[2], torch.softmax(torch.tensor(row), dim=-1).numpy(), rtol=1e-5)
    np.testing.assert_allclose(weights[-1], 1 / len(row), atol=0.02, err_msg="a large τ is nearly uniform")
    assert weights[0].argmax() == row.argmax()


@pytest.mark.parametrize("taus", [[], [0.0], [1.0, -2.0]])
def test_temperature_row_refuses_impossible_temperatures(taus):
    with pytest.raises(ValueError, match="positive"):
        temperature_row(np.zeros(3), taus)


# random experiments

def test_random_scores_have_the_asked_shape_seed_and_spread():
    scores = random_scores(64, 9, rows=400, seed=3)
    assert scores.shape == (400, 9)
    np.testing.assert_array_equal(scores, random_scores(64, 9, rows=400, seed=3))
    assert not np.array_equal(scores, random_scores(64, 9, rows=400, seed=4))
    assert scores.var() == pytest.approx(64, rel=0.1)


def test_variance_by_head_size_divides_one_measurement_by_each_divisor_squared():
    sizes = [1, 16, 256]
    table = variance_by_head_size(sizes, ("none", "sqrt", "linear"), samples=5_000, seed=2)
    unscaled = np.array([dot_product_variance(size, 5_000, seed=2) for size in sizes])
    np.testing.assert_allclose(table["none"], unscaled, rtol=1e-6)
    np.testing.assert_allclose(table["sqrt"], unscaled / np.array(sizes), rtol=1e-6)
    np.testing.assert_allclose(table["linear"], unscaled / np.array(sizes) ** 2, rtol=1e-6)


def test_random_softmax_collapses_unscaled_and_not_with_root_d_k():
    sizes = [1, 4, 16, 64, 256]
    stats = random_softmax_statistics(sizes, tokens=10, scalings=("none", "sqrt", "linear"), rows=512)
    assert (np.diff(stats["none"]["entropy"]) < 0).all()
    assert (np.diff(stats["none"]["max_weight"]) > 0).all()
    root = stats["sqrt"]["entropy"]
    assert root.max() - root.min() < 0.1 * root.mean()
    assert stats["linear"]["entropy"][-1] == pytest.approx(math.log(10), rel=0.01)


def test_scores_drawn_once_give_every_temperature_the_numbers_of_a_fresh_draw():
    sizes = [1, 8, 64]
    scores = random_scores_by_head_size(sizes, tokens=6, rows=100, seed=5)
    assert scores.shape == (3, 100, 6)
    for size, block in zip(sizes, scores, strict=True):
        np.testing.assert_array_equal(block, random_scores(size, 6, rows=100, seed=5))
    for temperature in (0.5, 1.0, 3.0):
        rescaled = softmax_statistics_by_head_size(scores, sizes, ("none", "temperature"), temperature)
        fresh = random_softmax_statistics(sizes, 6, ("none", "temperature"), temperature, rows=100, seed=5)
        for scaling in ("none", "temperature"):
            for name in ("entropy", "max_weight"):
                np.testing.assert_array_equal(rescaled[scaling][name], fresh[scaling][name])


def test_every_temperature_at_once_gives_each_the_numbers_of_that_temperature_alone():
    """The lab sends every τ of its slider at once: each must be, to the last bit, what one τ alone gives."""
    head_sizes = (1, 4, 64)
    scores = random_scores_by_head_size(head_sizes, 9, rows=50)  # (H, R, T)
    temperatures = [0.05, 0.5, 1.0, 3.0, 7.35, 20.0]
    together = softmax_statistics_by_temperature(scores, temperatures)
    assert together["entropy"].shape == together["max_weight"].shape == (len(temperatures), len(head_sizes))
    for index, tau in enumerate(temperatures):
        alone = softmax_statistics_by_head_size(scores, head_sizes, ("temperature",), tau)["temperature"]
        np.testing.assert_array_equal(together["entropy"][index], alone["entropy"])
        np.testing.assert_array_equal(together["max_weight"][index], alone["max_weight"])
    assert (np.diff(together["entropy"][:, -1]) > 0).all(), "a larger τ flattens the rows"


@pytest.mark.parametrize("taus", [[], [1.0, 0.0], [-2.0]])
def test_every_temperature_at_once_refuses_impossible_temperatures(taus):
    with pytest.raises(ValueError, match="positive"):
        softmax_statistics_by_temperature(np.zeros((1, 2, 3)), taus)


def test_statistics_by_head_size_need_one_block_of_scores_per_head_size():
    with pytest.raises(ValueError, match="one block per head size"):
        softmax_statistics_by_head_size(np.zeros((2, 4, 3)), [1, 2, 4], ("sqrt",))


def test_head_statistics_agree_with_the_trace_and_head_summary(tiny):
    encoding = encode(tiny, "time flies like an arrow")
    for scaling in ("none", "sqrt", "linear", "temperature"):
        trace = build_trace(tiny, encoding, TraceSettings(layer=1, scaling=scaling, temperature=0.5))
        ours = head_softmax_statistics(trace["Q split"][0], trace["K split"][0], [scaling], temperature=0.5)
        summary = head_summary(head_weights(trace), trace["attention_mask"])
        np.testing.assert_allclose(ours[scaling]["entropy"], summary["entropy"], rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(ours[scaling]["max_weight"], summary["max_weight"], rtol=1e-5)
        assert ours[scaling]["entropy"].shape == (4,)


# segments

@pytest.mark.parametrize(("which", "rows", "keys"), [
    ("all", [0, 1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 6]),
    ("a_to_b", [0, 1, 2, 3], [4, 5, 6]),
    ("b_to_a", [4, 5, 6], [0, 1, 2, 3]),
    ("within_a", [0, 1, 2, 3], [0, 1, 2, 3]),
    ("within_b", [4, 5, 6], [4, 5, 6]),
])
def test_every_pair_filter_picks_its_block(which, rows, keys):
    shown_rows, shown_keys = visible_tokens(PAIR_TYPES, PAIR_SPECIAL, which)
    assert (shown_rows.tolist(), shown_keys.tolist()) == (rows, keys)


@pytest.mark.parametrize(("which", "rows", "keys"), [
    ("all", [1, 2, 4, 5], [1, 2, 4, 5]),
    ("a_to_b", [1, 2], [4, 5]),
    ("b_to_a", [4, 5], [1, 2]),
    ("within_a", [1, 2], [1, 2]),
    ("within_b", [4, 5], [4, 5]),
])
def test_hiding_special_tokens_drops_cls_and_sep(which, rows, keys):
    for special in (PAIR_SPECIAL, PAIR_SPECIAL.astype(int).tolist()):  # a tokenizer's 0/1 list too
        shown_rows, shown_keys = visible_tokens(list(PAIR_TYPES), special, which, hide_special=True)
        assert (shown_rows.tolist(), shown_keys.tolist()) == (rows, keys)


def test_the_filters_are_the_five_documented_ones():
    assert list(PAIR_FILTERS) == ["all", "a_to_b", "b_to_a", "within_a", "within_b"]
    with pytest.raises(ValueError, match="all, a_to_b, b_to_a, within_a, within_b"):
        visible_tokens(PAIR_TYPES, PAIR_SPECIAL, "a_to_a")


def test_renormalised_rows_sum_to_one_over_the_kept_keys():
    weights = np.array([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3], [1.0, 0.0, 0.0]])
    kept = renormalised(weights, np.array([1, 2]))
    np.testing.assert_allclose(kept[:2], [[0.5, 0.5], [2 / 3, 1 / 3]])
    np.testing.assert_array_equal(kept[2], [0.0, 0.0], err_msg="a row with no weight left stays zero, not NaN")


def test_visible_weights_cut_the_block_and_renormalise_only_when_asked():
    weights = np.arange(49, dtype=np.float32).reshape(7, 7) / 100
    rows, keys = visible_tokens(PAIR_TYPES, PAIR_SPECIAL, "a_to_b", hide_special=True)  # [1, 2] -> [4, 5]
    np.testing.assert_array_equal(visible_weights(weights, rows, keys, False), weights[np.ix_(rows, keys)])
    rescaled = visible_weights(weights, rows, keys, True)
    np.testing.assert_allclose(rescaled, renormalised(weights, keys)[rows])
    np.testing.assert_allclose(rescaled.sum(axis=-1), 1.0, rtol=1e-6)


def test_visible_weights_of_every_token_are_the_weights_themselves_not_a_copy():
    weights = np.arange(2 * 49, dtype=np.float32).reshape(2, 7, 7) / 100  # (h, T, T)
    rows, keys = visible_tokens(PAIR_TYPES, PAIR_SPECIAL, "all", hide_special=False)
    assert visible_weights(weights, rows, keys, False) is weights
    renormalised_all = visible_weights(weights, rows, keys, True)
    assert renormalised_all is not weights
    np.testing.assert_allclose(renormalised_all, weights / weights.sum(axis=-1, keepdims=True), rtol=1e-6)
    reordered = np.array([1, 0, 2, 3, 4, 5, 6])  # every token, in another order: a cut, not the whole
    np.testing.assert_array_equal(visible_weights(weights, reordered, keys, False), weights[:, reordered])


# context

def test_find_token_is_case_insensitive_and_names_the_tokens_when_absent():
    tokens = ("[CLS]", "time", "flies", "like", "flies", "[SEP]")
    assert find_token(tokens, "flies") == 2
    assert find_token(tokens, "FLIES") == 2
    with pytest.raises(ValueError, match=r"'bananas' is not one of the tokens: \[CLS\] time flies"):
        find_token(tokens, "bananas")


def test_flies_is_the_same_vector_at_the_embeddings_and_parts_with_context(bundled):
    time_flies = encode(bundled, "time flies like an arrow")
    fruit_flies = encode(bundled, "fruit flies like a banana")
    first, second = find_token(time_flies.tokens[0], "flies"), find_token(fruit_flies.tokens[0], "flies")
    similarities = similarity_by_layer(time_flies, first, fruit_flies, second)
    assert similarities.shape == (len(time_flies.hidden_states),)  # embeddings, then each of the 6 layers
    assert similarities[0] == pytest.approx(1.0, abs=1e-6), "same token, same position: same embedding"
    assert (similarities[1:] < 0.95).all()
    assert similarities[-1] < similarities[1]
    np.testing.assert_allclose(similarity_by_layer(time_flies, first, time_flies, first), 1.0, atol=1e-6)
