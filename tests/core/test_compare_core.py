"""The compare view's arithmetic in the core: tokens aligned in order, their weights subtracted, the largest change."""

from __future__ import annotations

import numpy as np
import pytest

from attention.analyses.compare import (
    aligned_difference,
    aligned_positions,
    changes_by_query,
    largest_change,
    largest_changes,
)


@pytest.mark.parametrize(("tokens_a", "tokens_b", "expected_a", "expected_b"), [
    (["[CLS]", "a", "b", "[SEP]"], ["[CLS]", "a", "b", "[SEP]"], [0, 1, 2, 3], [0, 1, 2, 3]),
    (["[CLS]", "time", "flies", "[SEP]"], ["[CLS]", "fruit", "flies", "[SEP]"], [0, 2, 3], [0, 2, 3]),
    (["[CLS]", "x", "y", "z", "[SEP]"], ["[CLS]", "y", "[SEP]"], [0, 2, 4], [0, 1, 2]),
    (["a", "b"], ["c", "d"], [], []),
])
def test_aligned_positions_match_equal_tokens_in_order(tokens_a, tokens_b, expected_a, expected_b):
    positions_a, positions_b = aligned_positions(tokens_a, tokens_b)
    assert positions_a.tolist() == expected_a and positions_b.tolist() == expected_b
    assert [tokens_a[i] for i in positions_a] == [tokens_b[j] for j in positions_b]


def test_the_difference_is_taken_between_aligned_tokens_and_the_largest_change_located():
    tokens_a, tokens_b = ["[CLS]", "time", "flies", "[SEP]"], ["[CLS]", "fruit", "flies", "like", "[SEP]"]
    rng = np.random.default_rng(0)
    weights_a, weights_b = rng.random((4, 4)), rng.random((5, 5))
    positions_a, positions_b = aligned_positions(tokens_a, tokens_b)  # [CLS], flies, [SEP]
    difference = aligned_difference(weights_a, weights_b, positions_a, positions_b)
    for row, (a_row, b_row) in enumerate(zip(positions_a, positions_b, strict=True)):
        for column, (a_column, b_column) in enumerate(zip(positions_a, positions_b, strict=True)):
            assert difference[row, column] == weights_a[a_row, a_column] - weights_b[b_row, b_column]
    change = largest_change(difference, positions_a, positions_b)
    assert abs(change.difference) == np.abs(difference).max()
    assert change.difference == difference[change.row, change.column]
    assert change.position_a == (positions_a[change.row], positions_a[change.column])
    assert change.position_b == (positions_b[change.row], positions_b[change.column])


def test_a_stack_of_heads_is_subtracted_head_by_head():
    rng = np.random.default_rng(1)
    stack_a, stack_b = rng.random((2, 3, 5, 5)), rng.random((2, 3, 6, 6))  # (layers, heads, T, T)
    positions_a, positions_b = np.array([0, 2, 4]), np.array([0, 3, 5])
    stacked = aligned_difference(stack_a, stack_b, positions_a, positions_b)
    assert stacked.shape == (2, 3, 3, 3)
    for layer in range(2):
        for head in range(3):
            np.testing.assert_array_equal(stacked[layer, head], aligned_difference(
                stack_a[layer, head], stack_b[layer, head], positions_a, positions_b))


def test_every_heads_largest_change_is_found_with_its_weight_in_each_text():
    rng = np.random.default_rng(2)
    weights_a, weights_b = rng.random((3, 5, 5)), rng.random((3, 6, 6))  # (heads, T, T)
    positions_a, positions_b = np.array([0, 2, 4]), np.array([0, 3, 5])
    found = largest_changes(weights_a, weights_b, positions_a, positions_b)
    assert len(found) == 3
    for head, head_change in enumerate(found):
        alone = largest_change(aligned_difference(weights_a[head], weights_b[head], positions_a, positions_b),
                               positions_a, positions_b)
        assert head_change.change == alone
        assert head_change.weight_a == weights_a[head][alone.position_a]
        assert head_change.weight_b == weights_b[head][alone.position_b]
        assert head_change.weight_a - head_change.weight_b == alone.difference


def test_left_out_tokens_are_ranked_neither_as_queries_nor_as_keys():
    difference = np.array([[0.9, 0.1, -0.8],
                           [0.2, -0.3, 0.05],
                           [0.7, 0.25, 0.0]])  # (K, K): [CLS], a word, [SEP]
    positions = np.arange(3)
    leave_out = np.array([True, False, True])
    assert largest_change(difference, positions, positions).difference == 0.9
    assert largest_change(difference, positions, positions, leave_out).difference == -0.3
    assert largest_change(difference, positions, positions, np.ones(3, dtype=bool)) is None
    by_query = changes_by_query(difference, positions, positions, leave_out)
    assert [(change.row, change.column, change.difference) for change in by_query] == [(1, 1, -0.3)]
    assert [(change.row, change.column) for change in changes_by_query(difference, positions, positions)] == [
        (0, 0), (1, 1), (2, 0)]


def test_each_heads_query_tokens_carry_their_own_largest_change_and_weights():
    rng = np.random.default_rng(3)
    weights_a, weights_b = rng.random((2, 5, 5)), rng.random((2, 6, 6))  # (heads, T, T)
    positions_a, positions_b = np.array([0, 2, 4]), np.array([0, 3, 5])
    leave_out = np.array([True, False, False])
    for head, found in enumerate(largest_changes(weights_a, weights_b, positions_a, positions_b, leave_out)):
        difference = aligned_difference(weights_a[head], weights_b[head], positions_a, positions_b)
        assert found.change == largest_change(difference, positions_a, positions_b, leave_out)
        assert [query.change for query in found.by_query] == list(
            changes_by_query(difference, positions_a, positions_b, leave_out))
        for query in found.by_query:
            assert query.weight_a == weights_a[head][query.change.position_a]
            assert query.weight_b == weights_b[head][query.change.position_b]
