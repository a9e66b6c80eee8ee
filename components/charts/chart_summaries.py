"""Text alternatives of the charts that draw plain values, computed from the numbers they draw: a matrix of any
numbers (the lesson's heatmaps: embeddings, scores, weights, contexts), a 0/1 map, bars ranked, a line over layers,
each query's largest change. What a screen reader reads of a chart whose canvas holds no text (views/parts/scrubbed.said
writes it): short, a few numbers as spoken_numbers says them, and true of what is drawn. Labels that are text
(tokens, words) are quoted as Python writes a string (repr): the text is data, read aloud as written; an axis numbered
0, 1, … (dimensions, positions, heads) is named by its title."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from components.charts.chart_text import MOST_CELLS, largest_cells
from components.charts.spoken_numbers import figure, signed


def _namer(labels: Sequence[str], title: str):
    """How one label of an axis is read: "dimension 12" on an axis numbered 0, 1, … (its title then says what
    the number counts), else the label quoted."""
    numbered = [str(label) for label in labels] == [str(index) for index in range(len(labels))]
    return (lambda index: f"{title or 'column'} {index}") if numbered else (lambda index: repr(str(labels[index])))


def _axes(rows: int, columns: int, row_title: str, column_title: str) -> str:
    """'7 × 64 (query token × dimension of the head)', the titles where the axes have them."""
    named = f" ({row_title or 'row'} × {column_title or 'column'})" if row_title or column_title else ""
    return f"{rows} × {columns}{named}"


def describe_matrix(title: str, matrix: np.ndarray, rows: Sequence[str], columns: Sequence[str],
                    row_title: str = "", column_title: str = "") -> str:
    """'Weights, layer 0, head 3: 7 × 7 (query token × key token), from 0.01 to 0.93. Largest: 'flies', 'time'
    0.93; …': a heatmap's size, its range and its cells of largest size (a sign kept), NaN cells left out.
    matrix: (R, C) the numbers drawn, rows and columns their labels."""
    matrix = np.asarray(matrix, dtype=np.float64)
    row_name, column_name = _namer(rows, row_title), _namer(columns, column_title)
    shown = matrix[np.isfinite(matrix)]
    size = _axes(len(rows), len(columns), row_title, column_title)
    if shown.size == 0:
        return f"{title}: {size}. No cell is drawn."
    cells = "; ".join(f"{row_name(row)}, {column_name(column)} {figure(matrix[row, column])}"
                      for row, column in largest_cells(matrix))
    return f"{title}: {size}, from {figure(shown.min())} to {figure(shown.max())}. Largest: {cells}."


def describe_map(title: str, on: np.ndarray, rows: Sequence[str], columns: Sequence[str], row_title: str = "",
                 column_title: str = "", on_means: str = "1") -> str:
    """A 0/1 map (a mask, which head reads which): its size, how many cells are 1, and each row's 1s, as long as
    the text stays short; else the rows with fewest and most. on: (R, C) bool or 0/1."""
    on = np.asarray(on, dtype=bool)
    row_name, column_name = _namer(rows, row_title), _namer(columns, column_title)
    counts = on.sum(axis=1)  # (R,)
    head = f"{title}: {_axes(len(rows), len(columns), row_title, column_title)}, {int(on.sum())} of {on.size} cells " \
           f"{on_means}."
    if len(rows) <= 4:  # a few rows: each one's cells, by name
        each = "; ".join(f"{row_name(row)}: " + (", ".join(column_name(column) for column in np.flatnonzero(on[row]))
                                                 or "none") for row in range(len(rows)))
        return f"{head} {each}."
    fewest, most = int(counts.argmin()), int(counts.argmax())
    if counts[fewest] == counts[most]:
        return f"{head} Every row: {int(counts[most])}."
    return (f"{head} Fewest in a row: {row_name(fewest)}, {int(counts[fewest])}; most: {row_name(most)}, "
            f"{int(counts[most])}.")


def describe_ranked(title: str, labels: Sequence[str], values: np.ndarray) -> str:
    """Bars in the order drawn (the top guesses, most probable first): every one, 'label' value."""
    bars = "; ".join(f"{str(label)!r} {figure(value)}" for label, value in zip(labels, values, strict=True))
    return f"{title}: {bars}."


def describe_line(title: str, values: np.ndarray, point_names: Sequence[str]) -> str:
    """A line over points named point_names ("at the embeddings", "after layer 1", …): where it starts and ends,
    and its lowest and highest points."""
    values = np.asarray(values, dtype=np.float64)
    low, high = int(values.argmin()), int(values.argmax())
    return (f"{title}: {len(values)} points, {figure(values[0])} {point_names[0]} and {figure(values[-1])} "
            f"{point_names[-1]}; lowest {figure(values[low])} {point_names[low]}, highest {figure(values[high])} "
            f"{point_names[high]}.")


def describe_changes(title: str, queries: Sequence[str], keys: Sequence[str], changes: np.ndarray,
                     weights_a: np.ndarray, weights_b: np.ndarray, unit: str = "token") -> str:
    """Each query's largest change A − B (bars, one a query; keys: where it changed most): how many, and the
    MOST_CELLS largest, each with its weight in both texts. unit: what a query is ("token", or "word")."""
    order = np.argsort(-np.abs(np.asarray(changes, dtype=np.float64)), kind="stable")[:MOST_CELLS]
    largest = "; ".join(f"{str(queries[i])!r} → {str(keys[i])!r} {signed(changes[i])} (A {figure(weights_a[i])}, "
                        f"B {figure(weights_b[i])})" for i in order)
    return f"{title}, A − B, {len(queries)} query {unit}s. Largest: {largest}."
