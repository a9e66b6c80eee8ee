"""Every view's main chart downloads as PNG and SVG (the one-head view's: tests/page/test_page.py), made on click from
the same numbers the page shows."""

from __future__ import annotations

import pytest

from tests import pages

PAIR = {"text_b": "fruit flies like a banana"}
# view -> its link, the file name, and what the picture must say (its title; a token, where it has the tokens)
DOWNLOADS = {
    "heads": ({"view": "heads", "layer": "2"}, "mean-of-heads-layer-2", ("Mean of the heads, layer 2", "flies")),
    "neuron": ({"view": "neuron", "head": "3", "query": "2"}, "neuron-layer-0-head-3-query-2",
               ("q ⊙ k_j of query 2 (flies), layer 0, head 3", "flies")),
    "compare": ({"view": "compare", "layer": "1", "head": "4", **PAIR}, "compare-layer-1-head-4",
                ("Layer 1, head 4", "banana")),
    "lab": ({"view": "lab"}, "temperature", ("attention weight", "flies")),
    "lesson": ({"view": "lesson", "step": "5"}, "lesson-softmax", ("Weights = softmax(scaled)", "flies")),
    "lesson-4": ({"view": "lesson", "step": "4"}, "lesson-masked-weights", ("Weights = softmax(scaled + M)", "flies")),
    "lesson-10": ({"view": "lesson", "step": "10"}, "lesson-similarity-time", ("Cosine similarity of “time”",)),
    "counting": ({"view": "counting"}, "counting-window-attention", ("Attention weights",)),
    "switch": ({"view": "switch"}, "switch-embedding-moves-by-head", ("A moved (1 − cos), one head off",)),
    "block": ({"view": "block", "layer": "1"}, "block-written-layer-1", ("Layer 1: ‖residual in‖", "flies")),
}


@pytest.mark.parametrize("view", list(DOWNLOADS))
def test_the_views_main_chart_downloads_as_png_and_svg(view):
    query, name, said = DOWNLOADS[view]
    page, made = pages.open_keeping_downloads(query)
    pages.assert_healthy(page)
    assert made[f"{name}.png"]().startswith(b"\x89PNG\r\n")
    svg = made[f"{name}.svg"]().replace("&amp;", "&")
    assert svg.lstrip().startswith("<svg")
    assert all(words in svg for words in said), said
