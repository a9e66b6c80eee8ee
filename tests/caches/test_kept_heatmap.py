"""A heatmap kept by its shape (chart_memos.kept_heatmap) is the heatmap Altair builds for its matrix, drawn the same,
whatever its numbers, masked cells, clipped cells and labels; and one spec serves every text of its length."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attention.stages.dot_product import MASKED_SCORE
from components.caches.chart_memos import kept_heatmap
from components.charts.colour_ranges import robust_bound
from components.charts.draw import spec_and_frames
from components.charts.heatmap import heatmap
from tests import rendered

LABELS = [f"t{index}" for index in range(32)]
HOSTILE = ["[CLS]", "if", "'", '"', "datum", "<b>", "\\", *(f"w{index}" for index in range(24)), "[SEP]"]  # 32


def drawn(spec: dict, frames: dict) -> str:
    """The chart as Vega draws it (SVG), but for the names it gives a layer's marks and its gradients, and the empty
    groups of the layer that names the labels' datasets (label_stand_ins; in a column of charts, in its first)."""
    svg = rendered.svg({**spec, "datasets": {name: frame.to_dict("records") for name, frame in frames.items()}})
    svg = re.sub(r'<g class="mark-symbol role-mark (?:concat_\d+_)?layer_\d+_marks" aria-hidden="true"/>', "", svg)
    return re.sub(r"gradient_\d+", "gradient", re.sub(r"layer_\d+_marks", "marks", svg))


@pytest.mark.parametrize(("scheme", "clip"), [("blues", False), ("redblue", False), ("redblue", True)])
def test_a_kept_heatmap_is_drawn_as_the_one_altair_builds(scheme, clip):
    rng = np.random.default_rng(3)
    for matrix, labels in ((rng.normal(size=(32, 32)).astype(np.float32), LABELS),
                           (np.triu(rng.normal(size=(32, 32)), 1), HOSTILE)):
        matrix = np.where(matrix == 0, MASKED_SCORE, matrix).astype(np.float32)  # the second one with masked cells
        options = dict(title="t", scheme=scheme, canvas=True, size=480,
                       clip_at=robust_bound(matrix) if clip else None)
        kept = drawn(*kept_heatmap(matrix, labels, labels, **options))
        assert kept == drawn(*spec_and_frames(heatmap(matrix, labels, labels, **options)))
        assert ">datum<" in kept or labels is LABELS


def test_texts_of_one_length_share_the_spec_and_differ_in_their_datasets():
    """The browser swaps a chart's datasets where its spec is the same, and builds it again where not."""
    matrix = np.eye(32, dtype=np.float32)
    (first, first_frames), (second, second_frames) = (kept_heatmap(matrix, labels, labels, title="t", canvas=True)
                                                      for labels in (LABELS, HOSTILE))
    assert first == second
    assert [frame.equals(second_frames[name]) for name, frame in first_frames.items()].count(False) == 1, (
        "the labels' dataset alone differs")
