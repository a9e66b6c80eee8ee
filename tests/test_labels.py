"""Axis labels kept where there is room: every token of a pair whose sentences differ in one word, and the first
token, [CLS] (the darkest row and column), whatever the step between labels."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from components.charts.heatmap import heatmap
from tests import rendered
from tests.pages import assert_healthy, charts, open_page, spec_parts

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
