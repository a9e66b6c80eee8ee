"""Colour scales that say what their numbers say, on the page and drawn by Vega (tests/rendered.py):

- a head that spreads its attention evenly (random projections) is drawn pale and flat, where its own largest
  weight, 1.3 times a uniform row's, made it a dark square; a focused head still reaches the darkest blue;
- a signed matrix with a few outlier dimensions (the lesson's token embeddings) keeps its other values coloured,
  the outliers ringed at the end colours;
- the lesson draws a head's context (step 6) and its slice of the concatenation (step 8) on one scale;
- the overview's most spread-out head is a tint, not white.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from attention.dissect.heads import head_entropies
from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.charts.colour_ranges import CLIP_QUANTILE, UNIFORM_TIMES
from components.charts.colours import colour_ramp
from components.page.page_state import WEIGHT_SCALES
from tests import rendered
from tests.page.test_colours import expected_colours, head_range
from tests.pages import assert_healthy, chart_matrix, chart_title, charts, open_page

TEXT = "time flies like an arrow"  # the page's own
LONG = "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat"  # 19 tokens
RING = re.compile(r'<path [^>]*stroke="#000000"[^>]*/>')


def chart_titled(page, words: str):
    return next(chart for chart in charts(page) if words in chart_title(chart))


def test_a_random_heads_even_spread_is_drawn_pale_and_flat():
    page = open_page({"text": LONG, "source": "random"})
    assert_healthy(page)
    [chart] = charts(page)
    weights = chart_matrix(chart)  # (T, T) of layer 0, head 0
    keys = weights.shape[1]
    assert weights.max() < 1.5 / keys, "a random head is about uniform: the case the scale must draw as such"
    domain = head_range(chart, 0, 0)
    assert domain == pytest.approx([0.0, UNIFORM_TIMES / keys], rel=1e-6), "its colours end at 4/K, not at its max"
    drawn = rendered.cell_colours(rendered.svg(chart), weights.shape)
    np.testing.assert_allclose(drawn, expected_colours(weights, domain, "blues"), atol=3)
    darkness = rendered.darkness(drawn)
    halfway = rendered.darkness(colour_ramp("blues")[128])
    assert darkness.max() < halfway, "no cell of an even spread darker than the middle of the ramp"
    assert np.ptp(darkness) < halfway / 2, "flat: its cells differ little"
    assert any(f"{UNIFORM_TIMES}/K" in item.value for item in page.markdown), "the reading guide says the rule"


def test_a_focused_trained_head_keeps_the_darkest_blue(bundled):
    page = open_page({"text": LONG, "layer": "0", "head": "2"})
    assert_healthy(page)
    [chart] = charts(page)
    weights = build_trace(bundled, encode(bundled, LONG), TraceSettings(layer=0, head=2))["weights"][0]
    assert weights.max() > UNIFORM_TIMES / weights.shape[1]
    assert head_range(chart, 0, 2) == pytest.approx([0.0, float(weights.max())], rel=1e-6)
    drawn = rendered.cell_colours(rendered.svg(chart), weights.shape)
    assert drawn[np.unravel_index(weights.argmax(), weights.shape)].tolist() == colour_ramp("blues")[-1].tolist()


def test_the_weight_scales_words_say_the_even_spread_rule():
    assert f"{UNIFORM_TIMES}/K" in WEIGHT_SCALES["head"][1] and f"{UNIFORM_TIMES}/K" in WEIGHT_SCALES["layer"][1]


def saturation(rgb: np.ndarray) -> np.ndarray:
    """How far a colour is from white: its palest channel's distance from 255."""
    return 255 - np.asarray(rgb).min(axis=-1)


def test_the_lessons_token_embeddings_are_coloured_past_their_outliers(bundled):
    page = open_page({"view": "lesson", "step": "1"})
    assert_healthy(page)
    chart = chart_titled(page, "Token embeddings")
    embeddings = build_trace(bundled, encode(bundled, TEXT), TraceSettings())["token embeddings"][0]  # (T, C)
    drawn = rendered.svg(chart)
    colours = rendered.cell_colours(drawn, embeddings.shape)
    size = np.abs(embeddings)
    upper_tenth = size >= np.quantile(size, 0.9)
    assert np.median(saturation(colours[upper_tenth])) >= 80, "the largest tenth of values visibly coloured"
    bound = float(np.quantile(size, CLIP_QUANTILE))
    clipped = size > bound
    ends = colour_ramp("redblue")[[0, -1]]  # the two end colours
    for colour, value in zip(colours[clipped], embeddings[clipped], strict=True):
        assert np.abs(colour - ends[int(value > 0)]).max() <= 3, "a clipped cell at its end colour"
    assert len(RING.findall(drawn)) == int(clipped.sum()), "every clipped cell ringed, no other"
    [note] = [caption.value for caption in page.caption if caption.value.startswith(f"Colours end at ±{bound:.3g}, ")]
    assert f"±{bound:.3g}" in note and f"{size.max():.3g}" in note and f"{int(clipped.sum())} of" in note


def test_a_heads_context_has_one_colour_in_step_6_and_in_step_8(bundled):
    context_chart = chart_titled(open_page({"view": "lesson", "step": "6"}), "Context = weights")
    concat_chart = chart_titled(open_page({"view": "lesson", "step": "8"}), "Concatenated contexts")
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings())  # the lesson's head 0
    size = trace.head_size
    context = rendered.cell_colours(rendered.svg(context_chart), trace["context"][0].shape)
    concat = rendered.cell_colours(rendered.svg(concat_chart), trace["concat"][0].shape)
    np.testing.assert_allclose(context, concat[:, :size], atol=3)


def test_the_overviews_most_spread_out_head_is_a_tint_not_white(bundled):
    page = open_page({"view": "heads"})
    assert_healthy(page)
    [overview] = [chart for chart in charts(page) if "open_cell" in chart.proto.selection_mode]
    encoding = encode(bundled, TEXT)
    entropy = np.stack([head_entropies(build_trace(bundled, encoding, TraceSettings(layer=layer)))
                        for layer in range(6)])  # (L, nh)
    colours = rendered.cell_colours(rendered.svg(overview), entropy.shape)
    spread = np.unravel_index(entropy.argmax(), entropy.shape)
    assert saturation(colours[spread]) >= 30, "the broadest head is drawn, not left white"
    focused = np.unravel_index(entropy.argmin(), entropy.shape)
    assert colours[focused].tolist() == colour_ramp("blues")[-1].tolist(), "focused is still the darkest blue"
