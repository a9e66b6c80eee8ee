"""The one-head view's masked scores, as the page sends them and Vega draws them: every masked cell of the causal
mask carries a "×" and every negative score a bar, read from the head the chart's own inputs picked
(components/charts/cell_marks.py), so that a move in the browser carries the marks with the colours."""

from __future__ import annotations

import re

import numpy as np

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.charts.cell_marks import MASKED_MARK_COLOUR, SIGN_EDGE
from tests import rendered
from tests.pages import TEXT, assert_healthy, charts, open_page


def test_the_masked_stage_crosses_every_masked_cell_and_bars_every_negative_score(bundled):
    page = open_page({"text": TEXT, "layer": "3", "head": "2", "mask": "causal", "head_stage": "masked"})
    assert_healthy(page)
    [chart] = charts(page)
    drawn = rendered.svg(chart)
    masked = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=3, head=2, mask="causal"))["masked"][0]
    shown = np.isfinite(masked) & (masked > np.finfo(np.float32).min)  # (T, T)
    crosses = len(re.findall(f'<path transform="translate[^"]*" d="M-[^"]*" stroke="{MASKED_MARK_COLOUR}"', drawn))
    assert crosses == int((~shown).sum()) == 7 * 6 // 2
    assert len(re.findall(f'fill="#ffffff" stroke="{SIGN_EDGE}"', drawn)) == int((shown & (masked < 0)).sum()) > 0
