"""A heatmap's text alternative (charts/chart_text.py): the cells it names are the largest the matrix holds, in
order, with their signs; masked cells are never named; a token is quoted as data."""

from __future__ import annotations

import numpy as np

from components.charts.chart_text import describe_head, describe_layer, describe_query, largest_cells


def test_the_largest_cells_by_size_come_first_with_their_signs():
    matrix = np.array([[0.1, -0.9, 0.2], [0.5, 0.05, 0.7]], dtype=np.float32)
    assert largest_cells(matrix) == [(0, 1), (1, 2), (1, 0)]


def test_masked_cells_are_never_named():
    matrix = np.array([[0.3, np.nan], [np.nan, np.nan]], dtype=np.float32)
    assert largest_cells(matrix) == [(0, 0)]
    assert largest_cells(np.full((2, 2), np.nan)) == []


def test_the_description_names_the_head_its_size_and_its_largest_cells():
    rows = ["[CLS]", "it", "<b>if</b>"]
    matrix = np.array([[0.9, 0.05, 0.05], [0.2, 0.1, 0.7], [0.34, 0.33, 0.33]], dtype=np.float32)
    said = describe_head("Attention weights", 2, 5, matrix, rows, rows)
    assert said == ("Attention weights, layer 2, head 5: 3 query rows × 3 columns. Largest: '[CLS]' → '[CLS]' 0.90; "
                    "'it' → '<b>if</b>' 0.70; '<b>if</b>' → '[CLS]' 0.34.")
    assert describe_head("Masked", 0, 0, np.full((1, 1), np.nan), ["a"], ["a"]).endswith("No cell is drawn.")


def test_the_neuron_views_description_names_its_query_and_largest_weights():
    keys = ["0: [CLS]", "1: time", "2: flies"]
    said = describe_query(0, 2, "2: flies", np.array([0.1, 0.6, 0.3], dtype=np.float32), keys)
    assert said == ("The neuron view, layer 0, head 2, query '2: flies': its weights over 3 keys. Largest: "
                    "'1: time' 0.60; '2: flies' 0.30; '0: [CLS]' 0.10.")


def test_the_grids_description_names_the_heads_of_the_largest_weights():
    labels = ["a", "b"]
    values = np.array([[[0.5, 0.5], [0.5, 0.5]], [[0.1, 0.9], [0.2, 0.8]], [[0.7, 0.3], [0.4, 0.6]]], dtype=np.float32)
    said = describe_layer(3, [4, 5, 6], values, labels)
    assert said == ("Every head of layer 3, 3 heads over 2 tokens. The heads of the largest single weight: "
                    "head 5, 'a' → 'b' 0.90; head 6, 'a' → 'a' 0.70; head 4, 'a' → 'a' 0.50.")


def test_ties_are_named_in_row_then_column_order_as_a_full_sort_names_them():
    """Only the cells as large as the count-th are sorted: ties across that edge keep the order of a stable sort."""
    rng = np.random.default_rng(0)
    for _ in range(500):
        matrix = rng.integers(-3, 4, rng.integers(1, 9, 2)).astype(np.float64)  # few values: many ties
        matrix[rng.random(matrix.shape) < 0.3] = np.nan
        sizes = np.nan_to_num(np.abs(matrix), nan=-1.0)
        for count in (1, 3, 5):
            order = np.argsort(-sizes, axis=None, kind="stable")[:count]  # every cell sorted
            expected = [divmod(int(index), matrix.shape[1]) for index in order if sizes.flat[index] >= 0]
            assert largest_cells(matrix, count) == expected
