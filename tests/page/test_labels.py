"""Axis labels kept where there is room: every token of a pair whose sentences differ in one word, and the first
token, [CLS] (the darkest row and column), whatever the step between labels."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from components.charts.heatmap import heatmap
from components.charts.lettering import PRESENTING
from components.page import viewport
from tests import rendered
from tests.pages import APP, assert_healthy, chart_cell_labels, charts, open_page, spec_parts

A = "The animal didn't cross the street because it was too tired"
B = "The animal didn't cross the street because it was too wide"


def drawn_texts(drawn: str) -> list[str]:
    return [text for _, text in re.findall(r"<text([^>]*)>([^<]*)</text>", drawn)]


@pytest.mark.parametrize("size", [160, 240, 420], ids=["every-third", "every-other", "every-token"])
def test_the_first_token_is_labelled_on_both_axes_whatever_the_step(size):
    labels = ["[CLS]", *(f"t{i}" for i in range(1, 29))]
    drawn = rendered.svg(heatmap(np.random.default_rng(0).random((29, 29)), labels, labels, title="w",
                                 size=size).to_dict())
    assert drawn_texts(drawn).count("[CLS]") == 2, "a label on the query axis and one on the key axis"


def test_a_pairs_one_head_chart_labels_every_token_on_a_laptop():
    page = open_page(text=A, text_b=B)  # drawn for the default 1366×768 window (components/page/viewport.py)
    assert_healthy(page)
    axes = [part["encoding"][channel]["axis"] for part in spec_parts(json.loads(charts(page)[0].proto.spec))
            for channel in ("x", "y") if "axis" in part.get("encoding", {}).get(channel, {})]
    assert axes and all(axis["values"] == list(range(29)) for axis in axes), [axis["values"] for axis in axes]


WINOGRAD = ("The trophy didn't fit in the suitcase because it was too big.",
            "The trophy didn't fit in the suitcase because it was too small.")


def row_axis_values(page) -> list[int]:
    """The rows the one-head chart labels: its query axis's values."""
    return next(part["encoding"]["y"]["axis"]["values"] for part in spec_parts(json.loads(charts(page)[0].proto.spec))
                if "axis" in part.get("encoding", {}).get("y", {}))


@pytest.mark.parametrize("size", [{"main": 1000, "window": 1366, "height": 768},
                                  {"main": 920, "window": 1280, "height": 720}], ids=["1366x768", "1280x720"])
def test_the_winograd_pairs_one_head_chart_labels_every_row_where_its_column_has_room(size):
    """33 tokens: at 13 px a label they need 429 px, and the plot stopped at 420, labelling every other row, neither
    "it" among them. The column has room for 429 px and the labels beside them."""
    page = AppTest.from_file(APP, default_timeout=120)
    page.query_params.update(text=WINOGRAD[0], text_b=WINOGRAD[1])
    page.session_state[viewport.KEY] = {"size": size}
    page.run()
    assert_healthy(page)
    labels = chart_cell_labels(charts(page)[0])[0]
    assert [index for index, label in enumerate(labels) if label == "it"] == [11, 27]
    assert row_axis_values(page) == list(range(len(labels)))


def test_a_projected_tall_thin_matrix_labels_every_row():
    """A context (13 tokens × 32 dimensions) on a projector: its rows stood 16 px apart, under presentation mode's
    17 px between two labels, and every other token lost its label."""
    labels = [f"t{i}" for i in range(13)]
    spec = heatmap(np.random.default_rng(0).random((13, 32)), labels, [str(d) for d in range(32)], title="context",
                   size=420, lettering=PRESENTING).to_dict()
    rows = next(part["encoding"]["y"]["axis"]["values"] for part in spec_parts(spec)
                if "axis" in part.get("encoding", {}).get("y", {}))
    assert rows == list(range(13))


def test_on_a_phone_the_picked_querys_rows_keep_their_labels():
    """A phone has no room for 33 labels: every other row is written, and neither "it" was. The query picked (the
    neuron view's, carried in the link) keeps its label, and so does the same word in the pair's other sentence."""
    page = AppTest.from_file(APP, default_timeout=120)
    page.query_params.update(text=WINOGRAD[0], text_b=WINOGRAD[1], query="11")
    page.session_state[viewport.KEY] = {"size": {"main": 360, "window": 390, "height": 844}}
    page.run()
    assert_healthy(page)
    labelled = row_axis_values(page)
    assert len(labelled) < 33, "a phone writes some of the labels"
    assert {11, 27} <= set(labelled), labelled
