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
    of 3 px or more keeps its middle pixel grey: a cell read at its middle (as the tests read a picture) is masked.
    Only the pixels on the lines are looked at: a strided view per offset, 1 in HATCH_EVERY² of the picture each."""
    rows, columns = masked.shape
    height, width = pixels.shape[:2]
    block_rows = np.arange(height) * rows // height  # (H,): the cell row of each pixel row
    block_columns = np.arange(width) * columns // width  # (W,)
    block = height // rows
    keep_middle = block >= 3
    lined = pixels.copy()
    colour = [int(HATCH_COLOUR[i:i + 2], 16) for i in (1, 3, 5)]
    for first_row in range(HATCH_EVERY):  # the lines' pixels: x + y a multiple of HATCH_EVERY
        first_column = -first_row % HATCH_EVERY
        ys, xs = np.arange(first_row, height, HATCH_EVERY), np.arange(first_column, width, HATCH_EVERY)
        on = masked[block_rows[ys]][:, block_columns[xs]]  # (len(ys), len(xs))
        if keep_middle:
            on &= ~((ys % block == block // 2)[:, None] & (xs % (width // columns) == block // 2)[None, :])
        lined[first_row::HATCH_EVERY, first_column::HATCH_EVERY][on] = colour
    return lined
