"""The masked scores in Chromium, drawn by the Vega-Lite that Streamlit ships (not vl-convert's): under a causal
mask the cells above the diagonal are grey, and only they."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from components.charts.masked import MASKED_COLOUR
from harness.browser import act_and_measure, load_page
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

STAGE_BUTTONS = ".st-key-head_stage button"
GREY = [int(MASKED_COLOUR[i:i + 2], 16) for i in (1, 3, 5)]


def grey_share(page, described: str) -> float:
    """The share of the chart's plot pixels drawn in MASKED_COLOUR (the chart described as `described`)."""
    chart = page.locator(f'[data-testid="stVegaLiteChart"][aria-label^="{described}"]').first
    chart.locator("canvas").first.wait_for()
    pixels = np.asarray(Image.open(io.BytesIO(chart.screenshot())).convert("RGB"))  # (H, W, 3)
    return float((np.abs(pixels.astype(int) - GREY).max(axis=-1) <= 2).mean())


@pytest.mark.parametrize(("mask", "grey"), [("causal", True), ("model", False)])
def test_the_masked_stage_draws_the_keys_after_the_query_grey(page, base_url, mask, grey):
    load_page(page, f"{base_url}/?layer=2&head=5&mask={mask}")
    act_and_measure(page, page.locator(STAGE_BUTTONS).filter(has_text="Masked").click)
    share = grey_share(page, "Masked scores")
    if grey:  # 21 of the 49 cells of a 7-token text, in a chart that also holds axes, labels and a legend
        assert 0.1 < share < 21 / 49, share
    else:
        assert share < 1e-3, "BERT's own mask hides nothing in one text (a few pixels of lettering may be grey)"
