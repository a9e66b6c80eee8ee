"""How large a heatmap's plot is: its longer side, the room beside it for its row labels, and its rows' least height."""

from __future__ import annotations

PLOT_SIZE = 420  # px, the longer side of a chart

LABEL_PX = 110  # px beside a heatmap's plot for its row labels and their title (labels are cut at 90 px)

MIN_PLOT_PX = 160  # px: below this a phone scrolls the chart rather than shrink its cells further

MIN_ROW_PX = 16  # a short, wide matrix (7 tokens × 384 dimensions) keeps readable rows


def plot_size(rows: int, columns: int, size: int, min_row_px: float = MIN_ROW_PX) -> tuple[int, int]:
    """A plot's width and height for a rows × columns matrix, its longer side size px, each row at least
    min_row_px high (a short, wide matrix keeps readable rows) but the plot no taller than size."""
    cell = size / max(rows, columns)
    height = min(size, round(rows * max(cell, min_row_px)))
    return max(80, round(columns * cell)), max(80, height)
