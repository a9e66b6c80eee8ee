"""A chart of one dataset on a token axis, kept by its shape (chart_memos.kept_token_chart), is the chart Altair builds
for its numbers and tokens, drawn the same; and one spec serves every text of its length (the block's bars, the
tiled softmax's row)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.caches.chart_memos import kept_token_chart
from components.charts.block import (
    ratio_bars,
    ratio_frame,
    steps_bars,
    steps_frame,
    written_bars,
    written_frame,
)
from components.charts.draw import spec_and_frames
from components.charts.tiled_softmax import row_against_plain, row_frame, row_numbers
from tests.caches.test_kept_heatmap import HOSTILE, LABELS, drawn

RNG = np.random.default_rng(5)
# The block's steps' titles, data too: lines of words a strip, HOSTILE's words in one
STEP_TITLES = (("1. residual in · largest 3.2", "x = the embeddings"), ("2. attention", *HOSTILE[:3]))
CHARTS = {
    "the block's steps": (steps_bars, steps_frame, lambda: RNG.random((2, 32)) * 9),
    "the mixing ratio": (ratio_bars, ratio_frame, lambda: RNG.random(32)),
    "what each sublayer writes": (written_bars, written_frame,
                                  lambda: {part: RNG.random(32) for part in ("residual in", "attention", "MLP")}),
    "the tiled softmax's row": (row_against_plain, row_frame, lambda: row_numbers(RNG.random(32), RNG.random(32), 5)),
}


@pytest.mark.parametrize("chart", list(CHARTS))
def test_a_kept_chart_is_drawn_as_the_one_altair_builds_and_one_spec_serves_every_text(chart):
    build, frame_of, numbers = CHARTS[chart]
    options = dict(titles=STEP_TITLES) if build is steps_bars else dict(title="t")
    kept = []
    for labels in (LABELS, HOSTILE):
        values = numbers()
        spec, frames = kept_token_chart(build, frame_of, values, labels, width=400, **options)
        assert drawn(spec, frames) == drawn(*spec_and_frames(build(values, labels, width=400, **options)))
        kept.append(spec)
    assert json.dumps(kept[0]) == json.dumps(kept[1]), "one spec for both texts: the browser swaps the data in"
