"""Masked cells: a key its query may not look at, −∞ before the softmax. Drawn in a grey of neither colour scale,
so that one never reads as a very negative score, and left out of every colour range, whose end float32's lowest
number (the core's −∞, MASKED_SCORE) would otherwise be."""

from __future__ import annotations

import numpy as np

from attention.stages.dot_product import MASKED_SCORE

MASKED_COLOUR = "#c8c8c8"
# A picture's masked cells are hatched too, a diagonal line every HATCH_EVERY px: a grey region a reader might take
# for a pale colour of the scale reads as "hidden" by its pattern. The cells' own marks are cell_marks.py's.
HATCH_COLOUR = "#7a7a7a"
HATCH_EVERY = 6


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


def hatched(pixels: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """pixels (H, W, 3) of a picture of masked's cells (masked (R, K), True where masked; each cell a block of
    H / R × W / K px) with diagonal lines HATCH_EVERY px apart drawn in HATCH_COLOUR over the masked cells. A block
    of 3 px or more keeps its middle pixel grey: a cell read at its middle (as the tests read a picture) is masked."""
    rows, columns = masked.shape
    height, width = pixels.shape[:2]
    block_rows = np.arange(height) * rows // height  # (H,): the cell row of each pixel row
    block_columns = np.arange(width) * columns // width  # (W,)
    on_line = (np.arange(height)[:, None] + np.arange(width)[None, :]) % HATCH_EVERY == 0  # (H, W)
    block = height // rows
    if block >= 3:
        middle = np.arange(height) % block == block // 2, np.arange(width) % (width // columns) == block // 2
        on_line &= ~(middle[0][:, None] & middle[1][None, :])
    lined = pixels.copy()
    lined[masked[block_rows][:, block_columns] & on_line] = [int(HATCH_COLOUR[i:i + 2], 16) for i in (1, 3, 5)]
    return lined
