"""The scaling lab's lines, and the head atlas's labels, are told apart by their points' shapes as well as their
colours: the lab's red and orange are 15 ΔE apart under protanopia, the atlas's previous and punct 6
(components/charts/colour_vision.py), so a reader who cannot tell them apart reads each by its shape. Drawn by Vega
(tests/rendered.py) and read back point by point: every colour has one shape, and no two colours share one."""

from __future__ import annotations

import re
from collections import defaultdict

import pandas as pd
import pytest

from components.charts import scaling_lab
from components.charts.atlas import LABEL_COLOURS, atlas_grid
from components.charts.lettering import READING
from components.views.lab import random_softmax_table, variance_table
from tests import rendered

_POINT = re.compile(r'<path [^>]*aria-roledescription="point" transform="translate\([^)]*\)" d="([^"]*)" '
                    r'fill="([^"]*)"')


def every_label_atlas():
    """An atlas of one layer whose heads have every label in turn, of one strength."""
    names = {label: label.title() for label in LABEL_COLOURS}
    heads = pd.DataFrame({"layer": 0, "head": range(len(names)), "label": list(names),
                          "behaviour": list(names.values()), "strength": 0.8})
    return atlas_grid(heads, names, [], 1, len(names), 900, READING)


def shapes_by_colour(chart) -> dict[str, set[str]]:
    """Each colour of the chart's points -> the shapes its points are drawn with: their paths, which are equal for
    points of one shape and size (every point of these charts has the size of every other)."""
    shapes = defaultdict(set)
    for path, colour in _POINT.findall(rendered.svg(chart.to_dict())):
        shapes[colour].add(path)
    return shapes


@pytest.mark.parametrize("chart", [
    pytest.param(lambda: scaling_lab.variance_chart(variance_table(), 700), id="variance"),
    pytest.param(lambda: scaling_lab.softmax_chart(random_softmax_table(12), False, "softmax", 12, 700),
                 id="random-softmax"),
    pytest.param(every_label_atlas, id="atlas"),
])
def test_each_line_or_label_has_a_shape_of_its_own(chart):
    shapes = shapes_by_colour(chart())
    assert len(shapes) >= 3, shapes
    assert all(len(drawn) == 1 for drawn in shapes.values()), f"a colour drawn in several shapes: {shapes}"
    every = [next(iter(drawn)) for drawn in shapes.values()]
    assert len(set(every)) == len(every), f"two lines share a shape: {shapes}"
