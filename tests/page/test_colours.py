"""Colours that tell the truth, on the page: each chart drawn by Vega (tests/rendered.py) from what the page
sends, and its colours compared with the numbers.

Weights run from 0 to a largest value the link chooses (weight_scale: the head's own, the layer's, or 1);
signed values (scores, differences) from -m to m; the overview darkens the focused heads; a sentence
pair's B is marked on the axes.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from attention.dissect.heads import head_entropies, head_weights
from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.charts.colours import colour_ramp
from components.charts.neuron_chart import PRODUCT_BOUND
from components.charts.token_axes import SENTENCE_B_COLOUR
from tests import rendered
from tests.pages import assert_healthy, charts, open_page, pick_on_chart, picture_values, warnings

TEXT = "time flies like an arrow"
TEXT_B = "fruit flies like a banana"


def datasets(chart) -> dict[str, pd.DataFrame]:
    return {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets}


def head_range(chart, layer: int, head: int, panel: str = "p0") -> list[float]:
    ranges = datasets(chart)[f"{panel}-ranges"]
    return ranges[(ranges["layer"] == layer) & (ranges["head"] == head)]["value"].tolist()


def expected_colours(values: np.ndarray, domain: list[float], scheme: str) -> np.ndarray:
    """(…, 3): the colour of each value on the scheme's ramp over domain, as Vega draws it."""
    low, high = domain
    return colour_ramp(scheme)[np.round(np.clip((values - low) / (high - low), 0, 1) * 255).astype(int)]


def layer_weights(model, layer: int, text: str = TEXT, text_b: str | None = None) -> np.ndarray:
    """(nh, T, T): every head's weights of one layer."""
    return head_weights(build_trace(model, encode(model, text, text_b), TraceSettings(layer=layer)))[0]


def test_scores_are_coloured_symmetrically_around_zero_as_the_browser_draws_them(bundled):
    page = open_page({"text": TEXT, "layer": "2", "head": "5"})
    page.segmented_control(key="head_stage").set_value("Raw scores Q·Kᵀ").run()
    assert_healthy(page)
    [chart] = charts(page)
    scores = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=2, head=5))["scores"][0]
    bound = float(np.abs(scores).max())
    np.testing.assert_allclose(head_range(chart, 2, 5), [-bound, bound], rtol=1e-6)
    drawn = rendered.svg(chart)
    np.testing.assert_allclose(rendered.cell_colours(drawn, scores.shape),
                               expected_colours(scores, [-bound, bound], "redblue"), atol=3)
    assert 'aria-label="Gradient legend for fill color' in drawn, "one legend, a gradient, not dots"


@pytest.mark.parametrize("weight_scale", ["head", "layer", "one"])
def test_the_weight_scale_sets_where_every_heads_colours_end(weight_scale, bundled):
    page = open_page({"text": TEXT, "layer": "3", "head": "4", "weight_scale": weight_scale})
    assert_healthy(page)
    assert page.segmented_control(key="weight_scale").value == weight_scale
    [chart] = charts(page)
    weights = layer_weights(bundled, 3)  # (nh, T, T)
    ends = {"head": weights[4].max(), "layer": weights.max(), "one": 1.0}
    assert head_range(chart, 3, 4) == pytest.approx([0.0, ends[weight_scale]], rel=1e-6)
    drawn = rendered.cell_colours(rendered.svg(chart), weights[4].shape)
    np.testing.assert_allclose(drawn, expected_colours(weights[4], [0.0, ends[weight_scale]], "blues"), atol=3)
    if weight_scale != "head":  # one scale for the layer: another head's range is the same
        assert head_range(chart, 3, 9) == head_range(chart, 3, 4)


def test_the_layers_scale_reaches_the_heads_not_sent(bundled):
    text = "the quick brown fox jumps over the lazy dog " * 20  # pictures, a window of five layers sent
    page = open_page({"text": text, "layer": "1", "head": "2", "weight_scale": "layer"})
    assert_healthy(page)
    [chart] = charts(page)
    weights = layer_weights(bundled, 1, text)
    domain = head_range(chart, 1, 2)
    assert domain == pytest.approx([0.0, weights.max()], rel=1e-6)
    pictures = datasets(chart)["p0-pictures"]
    url = pictures[(pictures["layer"] == 1) & (pictures["head"] == 2)]["url"].item()
    np.testing.assert_allclose(picture_values(url, weights[2].shape, domain, "blues"), weights[2],
                               atol=3 * domain[1] / 255)


def test_the_grid_of_heads_shares_the_layers_scale(bundled):
    page = open_page({"view": "heads", "layer": "2", "weight_scale": "layer"})
    assert_healthy(page)
    [grid] = [chart for chart in charts(page) if "open_head" in chart.proto.selection_mode]
    rows = datasets(grid)["heads"]
    weights = layer_weights(bundled, 2)
    domain = [0.0, float(weights.max())]
    for head in (0, 7):
        url = rows[(rows["layer"] == 2) & (rows["head"] == head)]["picture"].item()
        np.testing.assert_allclose(picture_values(url, weights[head].shape, domain, "blues"), weights[head],
                                   atol=3 * domain[1] / 255)
    assert "largest weight of any head of the layer" in " ".join(caption.value for caption in page.caption)


def test_compare_panels_and_their_difference_take_the_weight_scale(bundled):
    page = open_page({"view": "compare", "text": TEXT, "text_b": TEXT_B, "weight_scale": "one"})
    assert_healthy(page)
    chart = charts(page)[0]  # the panels; each query's largest change is drawn under them
    assert head_range(chart, 0, 0, "p0") == head_range(chart, 0, 0, "p1") == [0.0, 1.0]
    assert head_range(chart, 0, 0, "p2") == [-1.0, 1.0], "a difference of weights: symmetric, out to ±1"


def test_weight_scale_round_trips_through_the_link_and_a_bad_one_falls_back():
    page = open_page({"weight_scale": "layer"})
    assert_healthy(page)
    assert page.query_params["weight_scale"] == "layer"
    page.segmented_control(key="weight_scale").set_value("one").run()
    assert page.query_params["weight_scale"] == "one"
    page.segmented_control(key="weight_scale").set_value("head").run()
    assert "weight_scale" not in page.query_params, "the default leaves the link"
    page = open_page({"weight_scale": "<b>all</b>"})
    assert_healthy(page)
    assert "weight_scale=`<b>all</b>` was ignored: it must be one of head, layer, one" in warnings(page)
    assert page.segmented_control(key="weight_scale").value == "head"
    assert charts(page), "the page keeps drawing"


def test_the_overview_draws_focused_heads_darkest_and_says_so(bundled):
    page = open_page({"view": "heads"})
    assert_healthy(page)
    [overview] = [chart for chart in charts(page) if "open_cell" in chart.proto.selection_mode]
    assert "darker = more focused" in rendered.svg(overview), "its title, as Vega draws it"
    encoding = encode(bundled, TEXT)
    entropy = np.stack([head_entropies(build_trace(bundled, encoding, TraceSettings(layer=layer)))
                        for layer in range(6)])  # (L, nh)
    darkness = rendered.darkness(rendered.cell_colours(rendered.svg(overview), entropy.shape))
    focused, spread = np.unravel_index(entropy.argmin(), entropy.shape), np.unravel_index(entropy.argmax(),
                                                                                          entropy.shape)
    assert darkness[focused] == darkness.max() and darkness[spread] == darkness.min()
    assert np.corrcoef(darkness.ravel(), entropy.ravel())[0, 1] < -0.9, "the lower the entropy, the darker"


@pytest.mark.parametrize("query", [{}, {"view": "heads"}, {"view": "lesson", "step": "4"}],
                         ids=["one head", "summary", "lesson"])
def test_sentence_b_is_marked_on_a_pairs_heatmaps(query, bundled):
    page = open_page({"text": TEXT, "text_b": TEXT_B, **query})
    assert_healthy(page)
    tokens = list(encode(bundled, TEXT, TEXT_B).tokens[0])
    second = tokens.index("[SEP]") + 1
    chart = next(chart for chart in charts(page) if "sentence B" in chart.proto.spec)
    shown = rendered.label_colours(rendered.svg(chart))
    assert any("(sentence B in orange)" in text for text in shown)
    assert shown["banana"] == (SENTENCE_B_COLOUR, "bold") and shown["arrow"][0] != SENTENCE_B_COLOUR
    assert shown["fruit"][0] == SENTENCE_B_COLOUR and tokens[second] == "fruit"


def test_a_single_text_has_no_sentence_b():
    page = open_page({"text": TEXT})
    assert_healthy(page)
    assert "sentence B" not in charts(page)[0].proto.spec


def test_the_neuron_views_products_end_at_the_picked_querys_largest_product(bundled):
    page = open_page({"view": "neuron", "layer": "1", "head": "3", "query": "2"})
    pick_on_chart(page, "chart-neuron", head=3, query=2)
    assert_healthy(page)
    [chart] = charts(page)
    rows = datasets(chart)["neuron-rows"]
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=1, head=3))
    products = trace["Q"][0][2][None, :] * trace["K"][0]  # (T, d): q ⊙ k_j
    line = rows[(rows["head"] == 3) & (rows["query"] == 2)]
    assert line[PRODUCT_BOUND].item() == pytest.approx(float(np.abs(products).max()), rel=1e-5)
    scales = [s for s in json.dumps(json.loads(chart.proto.spec)).split('"scale"') if PRODUCT_BOUND in s[:200]]
    assert scales and "[-(" in scales[0], "the products' scale runs from -bound to bound"
