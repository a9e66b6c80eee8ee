"""The switch view's charts said in words, for a screen reader (the charts' canvas holds no text): the layer × head
grid of what each head, switched off alone, does to the model's job, and sentence A's embedding before and after
the heads switched off now. Computed from the numbers the charts draw."""

from __future__ import annotations

import numpy as np

from components.charts.chart_text import largest_cells
from components.charts.spoken_numbers import figure, signed


def describe_head_grid(title: str, grid: np.ndarray, *, with_sign: bool) -> str:
    """"Drop in P('paris') in points, each head switched off alone, 6 layers × 12 heads. Largest: layer 3, head 4
    +12.30; …"; grid: (L, nh) as the chart draws it, the heads named by largest size (a sign kept where with_sign:
    a head can help or work against the guess)."""
    said = signed if with_sign else figure
    cells = "; ".join(f"layer {layer}, head {head} {said(grid[layer, head])}" for layer, head in largest_cells(grid))
    return f"{title}, {grid.shape[0]} layers × {grid.shape[1]} heads. Largest: {cells}."


def describe_embedding(before: np.ndarray, after: np.ndarray, heads_off: str) -> str:
    """Sentence A's embedding with all heads on (before, (C,)) and with the heads off now (after, (C,)), as the
    chart's three rows hold them; heads_off: how many are off, in words ("3 heads off", "all heads on")."""
    change = np.asarray(after, dtype=np.float64) - np.asarray(before, dtype=np.float64)  # (C,)
    opening = f"Sentence A's embedding, {len(before)} dimensions, {heads_off}"
    if not change.any():
        largest = "; ".join(f"dimension {column} {signed(before[column])}"
                            for _, column in largest_cells(np.asarray(before)[None, :]))
        return f"{opening}: the row with heads off equals it and their difference is 0. Largest values: {largest}."
    # 1 − cos of two unit vectors, as the page's metric computes it; float32 can put their dot product a hair above 1
    moved = max(0.0, 1.0 - float(np.asarray(after) @ np.asarray(before)))
    largest = "; ".join(f"dimension {column} {signed(change[column])}" for _, column in largest_cells(change[None, :]))
    return f"{opening}: it moved 1 − cos = {figure(moved)}. Largest changes (off − on): {largest}."
