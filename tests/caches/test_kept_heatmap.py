"""A heatmap kept by its shape (chart_memos.kept_heatmap) is the heatmap Altair builds for its matrix: the same spec,
the same datasets, whatever its numbers, masked cells and clipped cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attention.stages.dot_product import MASKED_SCORE
from components.caches.chart_memos import kept_heatmap
from components.charts.colour_ranges import robust_bound
from components.charts.draw import spec_and_frames
from components.charts.heatmap import heatmap

LABELS = [f"t{index}" for index in range(32)]


@pytest.mark.parametrize(("scheme", "clip"), [("blues", False), ("redblue", False), ("redblue", True)])
def test_a_kept_heatmap_is_the_one_altair_builds(scheme, clip):
    rng = np.random.default_rng(3)
    for matrix in (rng.normal(size=(32, 32)).astype(np.float32), np.triu(rng.normal(size=(32, 32)), 1)):
        matrix = np.where(matrix == 0, MASKED_SCORE, matrix).astype(np.float32)  # the second one with masked cells
        options = dict(title="t", scheme=scheme, canvas=True, size=480,
                       clip_at=robust_bound(matrix) if clip else None)
        spec, frames = kept_heatmap(matrix, LABELS, LABELS, **options)
        built_spec, built_frames = spec_and_frames(heatmap(matrix, LABELS, LABELS, **options))
        assert spec == built_spec
        assert frames.keys() == built_frames.keys()
        for name, frame in frames.items():
            pd.testing.assert_frame_equal(frame, built_frames[name])
