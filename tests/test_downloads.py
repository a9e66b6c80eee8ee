"""Every view's main chart downloads as PNG and SVG (the one-head view's: tests/test_page.py), made on click from
the same numbers the page shows."""

from __future__ import annotations

import pytest

from tests import pages

PAIR = {"text_b": "fruit flies like a banana"}
# view's link -> (file name, what the picture must say): its title, and a token of the text
DOWNLOADS = {
    "heads": ({"view": "heads", "layer": "2"}, "mean-of-heads-layer-2", "Mean of the heads, layer 2"),
    "neuron": ({"view": "neuron", "head": "3", "query": "2"}, "neuron-layer-0-head-3-query-2",
               "q ⊙ k_j of query 2 (flies), layer 0, head 3"),
    "compare": ({"view": "compare", "layer": "1", "head": "4", **PAIR}, "compare-layer-1-head-4",
                "Layer 1, head 4"),
    "lab": ({"view": "lab"}, "temperature", "attention weight"),
}


@pytest.mark.parametrize("view", list(DOWNLOADS))
def test_the_views_main_chart_downloads_as_png_and_svg(view):
    query, name, title = DOWNLOADS[view]
    page, made = pages.open_keeping_downloads(query)
    pages.assert_healthy(page)
    assert made[f"{name}.png"]().startswith(b"\x89PNG\r\n")
    svg = made[f"{name}.svg"]()
    assert svg.lstrip().startswith("<svg") and title in svg.replace("&amp;", "&") and "flies" in svg
