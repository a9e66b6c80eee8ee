"""The generation view's heatmap of one step's query rows, as a spec without its numbers: heatmap.heatmap's chart
on stand-in labels (label_stand_ins), so that a view keeps it (chart_memos.chart_spec) and sends only the step's
weights (heatmap.heatmap_frames) and its tokens. Altair's building of it was most of the server's part of a move of
the view's Step slider.

Letters used in shape comments: nh query heads, S cached tokens.
"""

from __future__ import annotations

import numpy as np

from components.charts.draw import spec_and_frames
from components.charts.heatmap import heatmap
from components.charts.lettering import READING, Lettering

SCHEME, DOMAIN = "blues", (0.0, 1.0)  # weights: 0 to 1, the same colours at every step and layer


def step_row_spec(row_labels: tuple[str, ...], column_labels: tuple[str, ...], title: str, size: int,
                  lettering: Lettering = READING) -> dict:
    """The spec of heatmap(weights, row_labels, column_labels, …) for any weights of that shape (nh, S): the
    labels are stand-ins (label_stand_ins.with_labels puts a step's own into a copy), the numbers are sent apart
    as heatmap_frames(weights, SCHEME, DOMAIN) names them. Positional, as chart_memos.chart_spec calls it."""
    blank = np.zeros((len(row_labels), len(column_labels)), dtype=np.float32)  # (nh, S)
    return spec_and_frames(step_row(blank, row_labels, column_labels, title, size, lettering))[0]


def step_row(weights: np.ndarray, row_labels, column_labels, title: str, size: int,
             lettering: Lettering = READING):
    """weights (nh, S) of a step's query rows, one a head, over the cached keys: the heatmap itself, as cells or, past
    heatmap.MAX_VECTOR_CELLS, as a picture."""
    return heatmap(weights, list(row_labels), list(column_labels), title=title, row_title="query head",
                   column_title="cached key", scheme=SCHEME, domain=list(DOMAIN), size=size, lettering=lettering)
