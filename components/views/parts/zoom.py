"""A long text's heatmap, zoomed: the rectangle a reader drags across its picture, drawn in cells under it.

Above 64 tokens a head is one picture (components/charts/heatmap.py), a pixel or less a token, and a picture cannot
name the cell under the pointer. Dragging a rectangle across it (scrubbed.zoom_window) draws those queries and
keys as a heatmap of their own, ZOOM_MOST tokens a side at most, each cell named on hover and coloured on the
same scale as the picture.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from components.charts.draw import show
from components.charts.heatmap import heatmap
from components.charts.lettering import READING, Lettering
from components.charts.scrub import ZOOM_MOST
from components.views.parts.scrubbed import zoom_window


def zoomed(matrix: np.ndarray, row_labels: list[str], column_labels: list[str], window: tuple[range, range], *,
           title: str, domain: list[float], scheme: str, row_title: str = "query token",
           column_title: str = "key token", size: int = 420, lettering: Lettering = READING):
    """matrix (R, K)'s rows and columns in window as a heatmap of cells, each label led by its index in the
    whole text, coloured over domain (the whole picture's range)."""
    rows, columns = window
    return heatmap(matrix[rows.start:rows.stop, columns.start:columns.stop],
                   [f"{i} {row_labels[i]}" for i in rows], [f"{j} {column_labels[j]}" for j in columns],
                   title=f"{title}, zoomed: rows {rows.start}–{rows.stop - 1} × columns {columns.start}–"
                         f"{columns.stop - 1}",
                   row_title=row_title, column_title=column_title, scheme=scheme, domain=domain, size=size,
                   lettering=lettering)


def zoom_under(chart_key: str, matrix: np.ndarray, row_labels: list[str], column_labels: list[str], **drawing) -> None:
    """Under the picture drawn as chart_key: the zoom the reader dragged, or how to make one. drawing: zoomed's."""
    window = zoom_window(chart_key, *matrix.shape)
    if window is None:
        st.caption(f"Too many cells to name one by one: drag a rectangle across the picture to see up to "
                   f"{ZOOM_MOST} × {ZOOM_MOST} of them, larger and named, here. A double click clears it.")
        return
    show(zoomed(matrix, row_labels, column_labels, window, **drawing), key=f"{chart_key}-zoom",
         lettering=drawing.get("lettering", READING))
