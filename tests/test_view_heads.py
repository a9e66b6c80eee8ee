"""The all-heads view through AppTest: the grid, the layer × head overview, the aggregates, and clicks.

AppTest cannot click a chart, so `click` sends what Streamlit's frontend sends after a click
(tests/pages.select_on_chart). tests/browser/test_views_e2e.py clicks the same charts in Chromium.
"""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pytest
from altair.utils.schemapi import validate_jsonschema
from streamlit.testing.v1 import AppTest

from attention import TraceSettings, build_trace, encode
from attention.heads import aggregate_heads, head_summary, head_weights, rollout
from components.heatmap import colour_domain
from tests.pages import (
    assert_healthy,
    chart_matrix,
    chart_picks,
    chart_values,
    open_page,
    picture_values,
    select_on_chart,
)

TEXT = "time flies like an arrow"
VEGA_LITE = alt.vegalite.v6.schema.core.load_schema()


def run_page(query: dict[str, str]) -> AppTest:
    page = open_page(query)
    assert_healthy(page)
    return page


def charts(page: AppTest, selection: str | None = None) -> list:
    """The page's charts; with a selection name, only those a click on which selects it."""
    every = list(page.get("vega_lite_chart"))
    return every if selection is None else [c for c in every if selection in c.proto.selection_mode]


def click(page: AppTest, chart, selection: dict) -> AppTest:
    select_on_chart(page, chart, selection)
    assert_healthy(page)
    return page


def shown_view(page: AppTest) -> tuple[str, int, int]:
    """The view, and the layer and head it shows: on the one-head view's chart, or on the sliders."""
    view = page.radio(key="view").value
    if view == "head":
        picks = chart_picks(charts(page)[0])
        return view, picks["layer"], picks["head"]
    return view, page.slider(key="layer").value, page.slider(key="head").value



def trace(model, settings: TraceSettings, text: str = TEXT):
    return build_trace(model, encode(model, text), settings)


def grid(page: AppTest):
    """The grid: one chart, one row of data per head shown."""
    [chart] = charts(page, "open_head")
    return chart


def grid_heads(page: AppTest) -> list[int]:
    return chart_values(grid(page))["head"].tolist()


def assert_pictures(page: AppTest, expected: np.ndarray) -> None:
    """The grid's pictures show expected (h, T, T), each head coloured from 0 to its own largest weight.

    Each cell's colour is read back through the colour ramp: equal to within a few of its 256 steps.
    """
    rows = chart_values(grid(page))
    assert len(rows) == len(expected)
    for url, weights in zip(rows["picture"], expected, strict=True):
        low, high = colour_domain(weights, "blues")
        shown = picture_values(url, weights.shape, [low, high], "blues")
        np.testing.assert_allclose(shown, weights, atol=3 * (high - low) / 255)


def test_grid_draws_each_head_as_the_one_head_view_does(bundled):
    page = run_page({"view": "heads", "layer": "1"})
    assert len(charts(page)) == 3, "the grid, the overview and the aggregate"
    assert grid_heads(page) == list(range(12))
    expected = [trace(bundled, TraceSettings(layer=1, head=head))["weights"][0] for head in range(12)]
    assert_pictures(page, np.stack(expected))
    one_head = run_page({"layer": "1", "head": "5"})
    np.testing.assert_array_equal(chart_matrix(charts(one_head)[0]), expected[5])


def test_grid_follows_source_and_scaling(bundled):
    page = run_page({"view": "heads", "layer": "2", "source": "random", "head_dim": "96",
                     "scaling": "temperature", "temperature": "2.5"})
    assert grid_heads(page) == [0, 1, 2, 3], "384 // 96 heads"
    settings = TraceSettings(layer=2, source="random", head_dim=96, scaling="temperature", temperature=2.5)
    every_head = head_weights(trace(bundled, settings))[0]
    assert_pictures(page, every_head)
    for head in range(4):
        np.testing.assert_allclose(every_head[head], trace(bundled, TraceSettings(
            layer=2, head=head, source="random", head_dim=96, scaling="temperature", temperature=2.5))["weights"][0])


def test_clicking_a_head_opens_it_in_the_one_head_view():
    page = run_page({"view": "heads", "layer": "3"})
    click(page, grid(page), {"open_head": [{"head": 5}]})
    assert shown_view(page) == ("head", 3, 5)
    assert page.query_params["head"] == "5" and "view" not in page.query_params
    assert page.subheader[0].value == "Layer 3, head 5"


def test_a_click_that_clears_the_selection_stays_on_the_grid():
    page = run_page({"view": "heads"})
    click(page, grid(page), {"open_head": []})
    assert shown_view(page) == ("heads", 0, 0)
    assert grid_heads(page) == list(range(12))


def test_overview_is_every_heads_mean_entropy_and_a_click_opens_a_cell(bundled):
    page = run_page({"view": "heads"})
    [overview] = charts(page, "open_cell")
    encoding = encode(bundled, TEXT)
    expected = np.stack([
        head_summary(head_weights(layer_trace), layer_trace["attention_mask"])["entropy"]
        for layer_trace in (build_trace(bundled, encoding, TraceSettings(layer=layer)) for layer in range(6))
    ])
    np.testing.assert_allclose(chart_matrix(overview), expected, rtol=1e-5)
    click(page, overview, {"open_cell": [{"row": 4, "column": 3}]})
    assert shown_view(page) == ("head", 4, 3)
    assert (page.query_params["layer"], page.query_params["head"]) == ("4", "3")


def test_aggregates_mean_max_and_rollout(bundled):
    page = run_page({"view": "heads", "layer": "2"})
    every_layer = [head_weights(trace(bundled, TraceSettings(layer=layer))) for layer in range(3)]
    mean = chart_matrix(charts(page)[-1])
    np.testing.assert_allclose(mean.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(mean, aggregate_heads(every_layer[2], "mean")[0], atol=1e-6)

    page.segmented_control(key="aggregate").set_value("max").run()
    np.testing.assert_allclose(chart_matrix(charts(page)[-1]), aggregate_heads(every_layer[2], "max")[0], atol=1e-6)
    assert page.query_params["aggregate"] == "max"

    page.segmented_control(key="aggregate").set_value("rollout").run()
    flow = chart_matrix(charts(page)[-1])
    assert "rollout through layers 0 to 2" in charts(page)[-1].proto.spec
    np.testing.assert_allclose(flow.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(flow, rollout(every_layer), atol=1e-6)
    assert page.query_params["aggregate"] == "rollout"
    assert "Abnar & Zuidema" in "\n".join(c.value for c in page.caption)


def test_a_long_text_grid_is_pictured_and_still_clickable(bundled):
    page = run_page({"view": "heads", "text": "word " * 70})
    assert_pictures(page, head_weights(trace(bundled, TraceSettings(), text="word " * 70))[0])
    click(page, grid(page), {"open_head": [{"head": 9}]})
    assert shown_view(page) == ("head", 0, 9)


@pytest.mark.parametrize(("head", "first"), [(0, 0), (100, 92), (383, 368)])
def test_hundreds_of_heads_show_sixteen_around_the_current_one(head, first):
    page = run_page({"view": "heads", "source": "random", "head_dim": "1", "head": str(head)})
    assert grid_heads(page) == list(range(first, first + 16))
    assert f"Showing heads {first} to {first + 15} of 384" in "\n".join(c.value for c in page.caption)


def test_identity_source_has_one_head_per_layer(bundled):
    page = run_page({"view": "heads", "source": "identity", "layer": "4"})
    assert grid_heads(page) == [0]
    assert_pictures(page, trace(bundled, TraceSettings(layer=4, source="identity"))["weights"])
    assert chart_matrix(charts(page, "open_cell")[0]).shape == (6, 1), "6 layers × 1 head"


def test_too_many_weights_to_sum_up_keeps_the_grid_and_says_why():
    page = run_page({"view": "heads", "source": "random", "head_dim": "1", "text": "word " * 300})
    assert len(grid_heads(page)) == 16
    assert not charts(page, "open_cell"), "no overview"
    assert "384 heads × 302² token pairs are too many weights" in page.info[0].value


@pytest.mark.parametrize("text", [TEXT, "word " * 70], ids=["cells", "picture"])
def test_every_spec_is_valid_vega_lite_and_a_layer_move_only_swaps_data(text):
    """The view skips Altair's validation when it draws: the specs are checked here, once. Moving the
    layer slider must leave every spec as it was, so that the browser only swaps the numbers in."""
    page = run_page({"view": "heads", "layer": "1", "text": text})
    specs = [chart.proto.spec for chart in charts(page)]
    for spec in specs:
        validate_jsonschema(json.loads(spec), VEGA_LITE)
    layer_one = chart_values(grid(page))
    page.slider(key="layer").set_value(3).run()
    assert_healthy(page)
    assert [chart.proto.spec for chart in charts(page)] == specs
    assert not chart_values(grid(page)).equals(layer_one), "layer 3's weights, not layer 1's"
