"""A heatmap's text alternative, computed from the numbers it draws: what a screen reader reads of a chart, whose
canvas holds no text. Short, and true of the head drawn: its title, which head, how many rows and columns, and the
cells of largest size, each as "row → column value" (a sign kept: a difference or a score may be negative)."""

from __future__ import annotations

import numpy as np

MOST_CELLS = 3  # the cells named: more would be a table, which the chart's numbers are there for


def largest_cells(matrix: np.ndarray, count: int = MOST_CELLS) -> list[tuple[int, int]]:
    """(row, column) of the count cells of largest absolute value, largest first (ties: row then column order);
    NaN cells (masked, or a key not in a text) are never named."""
    sizes = np.nan_to_num(np.abs(np.asarray(matrix, dtype=np.float64)), nan=-1.0)  # (R, K)
    flat = sizes.ravel()
    # Only the cells as large as the count-th largest are sorted: a stable sort of all 512 × 512 took 90 ms a chart
    candidates = np.flatnonzero(flat >= np.partition(flat, -count)[-count]) if flat.size > count else \
        np.arange(flat.size)
    order = candidates[np.argsort(-flat[candidates], kind="stable")][:count]
    return [divmod(int(index), matrix.shape[1]) for index in order if sizes.flat[index] >= 0]


def describe_head(title: str, layer: int, head: int, matrix: np.ndarray, rows: list[str], columns: list[str]) -> str:
    """'Attention weights, layer 2, head 5: 12 query rows × 12 keys. Largest: 'it' → 'animal' 0.41; …'. Tokens are
    quoted as Python writes a string (repr): the text is data, read aloud as written."""
    cells = "; ".join(f"{rows[row]!r} → {columns[column]!r} {matrix[row, column]:.2f}"
                      for row, column in largest_cells(matrix))
    return (f"{title}, layer {layer}, head {head}: {len(rows)} query rows × {len(columns)} columns. "
            + (f"Largest: {cells}." if cells else "No cell is drawn."))


def describe_query(layer: int, head: int, query: str, weights: np.ndarray, keys: list[str]) -> str:
    """The neuron view's: 'The neuron view, layer 0, head 2, query '3: like': its weights over 7 keys. Largest:
    '2: flies' 0.93; …'; weights: (K,) the query's row."""
    cells = "; ".join(f"{keys[column]!r} {weights[column]:.2f}" for _, column in largest_cells(weights[None, :]))
    return (f"The neuron view, layer {layer}, head {head}, query {query!r}: its weights over {len(keys)} keys. "
            + (f"Largest: {cells}." if cells else "No weight is drawn."))


def describe_layer(layer: int, heads: list[int], values: np.ndarray, labels: list[str]) -> str:
    """The all-heads grid's: 'Every head of layer 2, 12 heads over 7 tokens. The heads of the largest single weight:
    head 5, 'it' → 'animal' 0.91; …'; values: (h, T, T) the heads' weights, in the order of heads."""
    tops = [largest_cells(matrix, 1) for matrix in values]  # each head's largest cell, or none
    ranked = sorted((index for index, top in enumerate(tops) if top),
                    key=lambda index: -abs(float(values[index][tops[index][0]])))[:MOST_CELLS]
    cells = "; ".join(f"head {heads[index]}, {labels[tops[index][0][0]]!r} → {labels[tops[index][0][1]]!r} "
                      f"{values[index][tops[index][0]]:.2f}" for index in ranked)
    return (f"Every head of layer {layer}, {len(heads)} heads over {len(labels)} tokens. "
            + (f"The heads of the largest single weight: {cells}." if cells else "No cell is drawn."))
