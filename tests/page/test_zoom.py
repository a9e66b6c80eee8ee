"""A long text's heatmap names its cells in a zoom: the rectangle dragged across its picture, drawn in cells.

At 107 tokens a head is one picture, whose tooltip could only show the picture's own fields. The rectangle a
reader drags is reported to the page (AppTest sends it as the browser would), which draws those queries and keys
as cells, each named by its tokens, with the core's own weights; tests/browser/test_zoom_e2e.py drags it.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.charts.scrub import ZOOM_MOST, cells_under
from tests.pages import assert_healthy, chart_cell_labels, chart_matrix, chart_title, charts, open_page, select_on_chart

TEXT = "the quick brown fox jumps over the lazy dog and then what if it rains " * 7  # 107 tokens


def test_a_dragged_rectangle_is_drawn_in_cells_with_the_cores_weights_and_named_tokens(bundled):
    page = open_page(text=TEXT, layer="2", head="5")
    assert_healthy(page)
    [picture] = charts(page)
    assert "drag a rectangle across the picture" in " ".join(c.value for c in page.caption).lower()

    select_on_chart(page, picture, {"zoom": {"x": [32.4, 46.6], "y": [59.2, 45.1]}})  # dragged bottom to top
    assert_healthy(page)
    [zoomed] = [c for c in charts(page) if "zoomed" in chart_title(c)]
    assert "rows 45–59 × columns 32–46" in chart_title(zoomed)
    weights = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=2, head=5))["weights"][0]
    np.testing.assert_allclose(chart_matrix(zoomed), weights[45:60, 32:47], atol=1e-6)
    tokens = encode(bundled, TEXT).tokens[0]
    row_labels, column_labels = chart_cell_labels(zoomed)
    assert (row_labels[0], column_labels[0]) == (f"45 {tokens[45]}", f"32 {tokens[32]}")  # the first cell's names


def test_a_short_texts_cells_need_no_zoom():
    page = open_page(text="what if it rains tomorrow")
    assert_healthy(page)
    assert not [c for c in page.caption if "drag a rectangle" in c.value.lower()]


@pytest.mark.parametrize(("extent", "expected"), [
    ([3.2, 7.9], range(3, 8)),
    ([7.9, 3.2], range(3, 8)),
    ([-4.0, 2.5], range(0, 3)),
    ([5.5, 5.6], range(5, 6)),  # a click: one cell
    ([0.0, 200.0], range((107 - ZOOM_MOST) // 2, (107 - ZOOM_MOST) // 2 + ZOOM_MOST)),  # the middle, ZOOM_MOST
])
def test_a_dragged_extent_covers_the_cells_it_touches(extent, expected):
    assert cells_under(extent, 107) == expected
