"""The heatmap builder on its own: valid Vega-Lite specs, its cells, its pictures, and how it is drawn.

The page hands Streamlit the builder's specs without checking them again (components/charts.py),
so they are checked against the Vega-Lite schema here, once.
"""

from __future__ import annotations

import numpy as np
import pytest

from components.heatmap import MAX_VECTOR_CELLS, colour_domain, heatmap, picture_url
from tests.pages import picture_values


@pytest.mark.parametrize("size", [7, 70], ids=["cells", "raster"])
@pytest.mark.parametrize("canvas", [False, True], ids=["default", "canvas"])
def test_every_kind_of_heatmap_is_a_valid_spec(size, canvas):
    matrix = np.random.default_rng(0).random((size, size), dtype=np.float32)
    labels = [f"t{i}" for i in range(size)]
    spec = heatmap(matrix, labels, labels, title="Attention weights", canvas=canvas).to_dict()  # validates

    assert spec["description"] == "Attention weights"  # the chart's aria-label in the browser
    assert spec.get("usermeta", {}).get("embedOptions", {}).get("renderer") == ("canvas" if canvas else None)
    assert ("layer" in spec) == (size * size > MAX_VECTOR_CELLS)


def test_small_matrices_send_one_row_per_cell():
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    chart = heatmap(matrix, ["a", "b", "c"], ["w", "x", "y", "z"], title="t")
    cells = chart.data
    assert len(cells) == 12
    np.testing.assert_array_equal(cells["value"].to_numpy().reshape(3, 4), matrix)
    assert cells["row_label"].tolist()[:4] == ["a"] * 4
    assert cells["column_label"].tolist()[:4] == ["w", "x", "y", "z"]


@pytest.mark.parametrize(("shape", "scheme"), [((7, 7), "blues"), ((80, 80), "blues"), ((5, 384), "redblue")])
def test_a_picture_shows_each_cell_in_its_colour_of_the_ramp(shape, scheme):
    matrix = np.random.default_rng(0).random(shape).astype(np.float32) - (0.5 if scheme == "redblue" else 0.0)
    domain = colour_domain(matrix, scheme)
    shown = picture_values(picture_url(matrix, domain, scheme), shape, domain, scheme)
    np.testing.assert_allclose(shown, matrix, atol=3 * (domain[1] - domain[0]) / 255)
