"""The logit lens's map (components/charts/lens.py): heatmap.py's cells at the size asked, each cell lettered with
its top token as data, the first layer of the final guess ringed."""

from __future__ import annotations

import numpy as np
import pytest

from components.charts.lens import cell_tokens, lens_map
from components.charts.lettering import PRESENTING, READING

HOSTILE = ["if", "datum", "<b>", "${x}", "\"q\"", "a-very-long-token"]


@pytest.mark.parametrize("lettering", [READING, PRESENTING])
def test_the_map_is_as_large_as_asked_and_its_tokens_are_data(lettering):
    probabilities = np.linspace(0, 1, 18).reshape(3, 6)
    chart = lens_map(probabilities, [HOSTILE] * 3, np.array([0, 1, 2, 2, 1, 0]), ["0", "1", "2"], HOSTILE,
                     title="Top next token", size=300, lettering=lettering).to_dict()
    assert chart["width"] == 300 and chart["height"] == 150, "6 columns across 300 px, 3 rows of 50"
    expressions = " ".join(expressions_in(chart))
    assert "datum.white" in expressions
    assert not [token for token in ("<b>", "${x}", "a-very-long-token") if token in expressions], (
        "a token is data (a dataset, a parameter's value), never part of an expression")


def expressions_in(part) -> list[str]:
    """Every string a spec gives Vega to parse: expressions, label expressions, calculations, tests, filters."""
    if isinstance(part, dict):
        found = [value for name, value in part.items()
                 if name in ("expr", "labelExpr", "calculate", "test", "filter") and isinstance(value, str)]
        return found + [text for value in part.values() for text in expressions_in(value)]
    if isinstance(part, list):
        return [text for value in part for text in expressions_in(value)]
    return []


def test_each_cell_holds_its_top_token_cut_short_and_white_on_dark_cells():
    cells = cell_tokens([["a-very-long-token", "b"]], np.array([[0.9, 0.1]]))
    assert cells["short"].tolist() == ["a-very-…", "b"] and cells["whole"].tolist() == ["a-very-long-token", "b"]
    assert cells["white"].tolist() == [True, False]


def test_cells_too_small_to_letter_keep_their_token_in_the_tooltip():
    tall = np.full((31, 6), 0.5)  # SmolLM2's 30 layers and the embeddings, in 300 px: 9.7 px a cell
    chart = lens_map(tall, [HOSTILE] * 31, np.zeros(6, int), [str(row) for row in range(31)], HOSTILE,
                     title="Top next token", size=300).to_dict()
    marks = [part.get("mark") for part in parts_of(chart)]
    assert not any(isinstance(mark, dict) and mark.get("type") == "text" for mark in marks)
    assert "top token" in str(chart), "the token stays, in the tooltip"


def parts_of(part) -> list[dict]:
    if isinstance(part, dict):
        return [part] + [found for value in part.values() for found in parts_of(value)]
    if isinstance(part, list):
        return [found for value in part for found in parts_of(value)]
    return []
