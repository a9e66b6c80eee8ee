"""Masked cells: a key its query may not look at, −∞ before the softmax. Drawn in a grey of neither colour scale,
so that one never reads as a very negative score, and left out of every colour range, whose end float32's lowest
number (the core's −∞, MASKED_SCORE) would otherwise be."""

from __future__ import annotations

import numpy as np

from attention.stages.dot_product import MASKED_SCORE

MASKED_COLOUR = "#c8c8c8"


def unmasked(values: np.ndarray) -> np.ndarray:
    """values' shape, True where a cell holds a number to colour; False where it is masked: the core's −∞
    (MASKED_SCORE, float32's lowest), or no finite number at all (NaN, ±∞)."""
    return np.isfinite(values) & (values > MASKED_SCORE)


def masked_cells(values: np.ndarray) -> np.ndarray | None:
    """values' shape, True where a cell is masked (not unmasked); None when none is, found in one pass over the
    values (a layer of 512-token heads is 12 MB, and most stages have no masked cell)."""
    low, high = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
    if low > MASKED_SCORE and np.isfinite(high):  # False for a NaN as well
        return None
    return ~unmasked(values)


def masked_as_missing(values: np.ndarray) -> np.ndarray:
    """values with every masked cell as NaN, which Vega reads as no number (isValid is false): a copy when a cell
    is masked, else values itself."""
    masked = masked_cells(values)
    return values if masked is None else np.where(masked, np.float32(np.nan), values).astype(values.dtype)
