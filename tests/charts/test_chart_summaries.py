"""The text alternatives of the charts that draw plain values (charts/chart_summaries.py): a matrix's size, range
and largest cells, an axis numbered 0, 1, … named by its title, a 0/1 map's counts, bars and a line, each query's
largest change; a token is quoted as data, whatever it holds."""

from __future__ import annotations

import numpy as np

from components.charts.chart_summaries import (
    describe_changes,
    describe_line,
    describe_map,
    describe_matrix,
    describe_ranked,
)


def test_a_matrix_says_its_size_range_and_largest_cells_a_numbered_axis_by_its_title():
    matrix = np.array([[0.5, -1.25, 0.004], [np.nan, 0.25, 2.0]])
    said = describe_matrix("Q, layer 0, head 1", matrix, ["<b>it</b>", "'"], ["0", "1", "2"], "token", "dimension")
    assert said == ("Q, layer 0, head 1: 2 × 3 (token × dimension), from -1.25 to 2.00. Largest: \"'\", dimension 2 "
                    "2.00; '<b>it</b>', dimension 1 -1.25; '<b>it</b>', dimension 0 0.50.")
    assert describe_matrix("Masked", np.full((1, 1), np.nan), ["a"], ["a"]) == "Masked: 1 × 1. No cell is drawn."


def test_a_map_says_its_ones_row_by_row_when_it_has_few_rows_else_its_fewest_and_most():
    readers = np.array([[1, 0], [0, 1]])
    assert describe_map("Shared", readers, ["0", "1"], ["0", "1"], "query head", "kv head", "read") == (
        "Shared: 2 × 2 (query head × kv head), 2 of 4 cells read. query head 0: kv head 0; query head 1: kv head 1.")
    causal = np.tril(np.ones((5, 5), dtype=bool))
    tokens = ["a", "b", "c", "d", "e"]
    assert describe_map("Mask", causal, tokens, tokens, on_means="may look").endswith(
        "15 of 25 cells may look. Fewest in a row: 'a', 1; most: 'e', 5.")
    assert describe_map("Mask", np.ones((5, 5)), tokens, tokens, on_means="may look").endswith("Every row: 5.")


def test_bars_a_line_and_the_changes_say_their_numbers():
    assert describe_ranked("Top", [" the", "${x}"], np.array([0.5, 0.0031])) == "Top: ' the' 0.50; '${x}' 0.0031."
    assert describe_line("Sim", np.array([1.0, 0.6, 0.8]), ["at the embeddings", "after layer 1", "after layer 2"]) \
        == ("Sim: 3 points, 1.00 at the embeddings and 0.80 after layer 2; lowest 0.60 after layer 1, highest 1.00 "
            "at the embeddings.")
    said = describe_changes("Each", ["it", "was", "too"], ["animal", "it", "street"], np.array([0.02, -0.3, 0.1]),
                            np.array([0.5, 0.1, 0.3]), np.array([0.48, 0.4, 0.2]))
    assert said == ("Each, A − B, 3 query tokens. Largest: 'was' → 'it' -0.30 (A 0.10, B 0.40); 'too' → 'street' "
                    "+0.10 (A 0.30, B 0.20); 'it' → 'animal' +0.020 (A 0.50, B 0.48).")
