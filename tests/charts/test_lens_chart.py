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
