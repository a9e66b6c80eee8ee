"""The all-heads view through AppTest: the grid and its summary, the layer × head overview, and clicks.

The grid and the heads summed up are one chart, whose dataset holds every layer of a short text and
whose own layer input picks one. AppTest cannot click a chart or move its input, so `click` sends what
Streamlit's frontend sends after either (tests/pages.select_on_chart). tests/browser/test_views_e2e.py
clicks the same charts in Chromium, tests/browser/test_heads_scrub_e2e.py moves the layer there.
"""

from __future__ import annotations

import json
import re

import altair as alt
import jsonschema
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from attention.dissect.heads import aggregate_heads, head_summary, head_weights, rollout
from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.charts.colour_ranges import colour_domain, uniform_end
from components.charts.grid import GRID_SIZE, grid_layout
from components.charts.pictures import pooled
from components.views.heads import ALL_LAYERS_WEIGHTS, OVERVIEW_TITLE
from tests import rendered
from tests.pages import (
    assert_healthy,
    chart_inputs,
    chart_matrix,
    chart_picks,
    open_page,
    picture_values,
    select_on_chart,
    spec_parts,
)

TEXT = "time flies like an arrow"
VEGA_LITE = jsonschema.Draft7Validator(alt.load_schema())  # the schema of the Vega-Lite Altair writes


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
    """The view, and the layer and head it shows: on the one-head view's chart, or on the grid's own layer
    input and the Head slider."""
    view = page.radio(key="view").value
    if view == "head":
        picks = chart_picks(charts(page)[0])
        return view, picks["layer"], picks["head"]
    return view, chart_picks(grid(page))["layer"], page.slider(key="head").value


def trace(model, settings: TraceSettings, text: str = TEXT):
    return build_trace(model, encode(model, text), settings)


def grid(page: AppTest):
    """The grid and the heads summed up under it: one chart."""
    [chart] = charts(page, "open_head")
    return chart


def dataset(chart, name: str, every_layer: bool = False) -> pd.DataFrame:
    """A chart's dataset by name; unless every_layer, only the rows of the layer its input shows."""
    [blob] = [d.data.data for d in chart.proto.datasets if d.name == name]
    rows = pa.ipc.open_stream(blob).read_all().to_pandas()
    if every_layer:
        return rows
    return rows[rows["layer"] == chart_picks(chart)["layer"]].reset_index(drop=True)


def grid_heads(page: AppTest) -> list[int]:
    return dataset(grid(page), "heads")["head"].tolist()


def summary(page: AppTest) -> np.ndarray:
    """The heads summed up (T, T), as the grid's chart holds them for the layer it shows."""
    chart = grid(page)
    return summed(chart, layers_sent(page).index(chart_picks(chart)["layer"]))


def summed(chart, place: int) -> np.ndarray:
    """The heads summed up (T, T) of the place-th layer sent: a column of the summary's cells (row, column,
    then one column per layer sent, "0", "1", …)."""
    cells = dataset(chart, "summed-cells", every_layer=True)
    tokens = cells["row"].max() + 1
    matrix = np.full((tokens, tokens), np.nan)
    matrix[cells["row"], cells["column"]] = cells[str(place)]
    return matrix


def layers_sent(page: AppTest) -> list[int]:
    return sorted(set(dataset(grid(page), "heads", every_layer=True)["layer"]))


def assert_pictures(page: AppTest, expected: np.ndarray) -> None:
    """The grid's pictures show expected (h, T, T), each head coloured from 0 to its own largest weight (or, if
    larger, a few times a uniform row's: colour_ranges.uniform_end); a text
    longer than a small map is wide, in blocks of tokens, each its largest weight (pictures.pooled).

    Each cell's colour is read back through the colour ramp: equal to within a few of its 256 steps.
    """
    rows = dataset(grid(page), "heads")
    assert len(rows) == len(expected)
    for url, weights in zip(rows["picture"], expected, strict=True):
        low, high = colour_domain(weights, "blues", [0.0, uniform_end(weights.shape[-1])])
        blocks = pooled(weights, GRID_SIZE)  # (T / k, T / k)
        shown = picture_values(url, blocks.shape, [low, high], "blues")
        np.testing.assert_allclose(shown, blocks, atol=3 * (high - low) / 255)


def test_grid_draws_each_head_as_the_one_head_view_does(bundled):
    page = run_page({"view": "heads", "layer": "1"})
    assert len(charts(page)) == 3, "the grid with the heads summed up under it, the overview, where attention parks"
    assert grid_heads(page) == list(range(12))
    expected = [trace(bundled, TraceSettings(layer=1, head=head))["weights"][0] for head in range(12)]
    assert_pictures(page, np.stack(expected))
    one_head = run_page({"layer": "1", "head": "5"})
    np.testing.assert_allclose(chart_matrix(charts(one_head)[0]), expected[5], rtol=1e-5, atol=1e-6)


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
    mean = summary(page)
    np.testing.assert_allclose(mean.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(mean, aggregate_heads(every_layer[2], "mean")[0], atol=1e-6)

    page.segmented_control(key="aggregate").set_value("max").run()
    np.testing.assert_allclose(summary(page), aggregate_heads(every_layer[2], "max")[0], atol=1e-6)
    assert page.query_params["aggregate"] == "max"
    assert "Max of the heads of layer 2" in rendered.svg(grid(page)), "Vega titles it from its data"

    page.segmented_control(key="aggregate").set_value("rollout").run()
    flow = summary(page)
    assert "Attention rollout through layers 0 to 2" in rendered.svg(grid(page)), "Vega titles it from the pick"
    np.testing.assert_allclose(flow.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(flow, rollout(every_layer), atol=1e-6)
    assert page.query_params["aggregate"] == "rollout"
    assert "Abnar & Zuidema" in "\n".join(c.value for c in page.caption)
    assert "multiplied through layers 0 to 2" in "\n".join(c.value for c in page.caption)


def test_every_layer_is_sent_once_with_its_heads_and_its_summaries(bundled):
    page = run_page({"view": "heads", "layer": "1"})
    chart = grid(page)
    assert layers_sent(page) == list(range(6))
    assert chart_inputs(chart) == {"layer": (0, 5)}
    encoding = encode(bundled, TEXT)
    every_layer = [head_weights(build_trace(bundled, encoding, TraceSettings(layer=layer))) for layer in range(6)]
    for layer, weights in enumerate(every_layer):
        select_on_chart(page, grid(page), {"layer": [{"layer": layer}]})
        assert_healthy(page)
        assert_pictures(page, weights[0])
        np.testing.assert_allclose(summed(chart, layer), aggregate_heads(weights, "mean")[0], atol=1e-6)
    page.segmented_control(key="aggregate").set_value("rollout").run()
    for layer in range(6):
        np.testing.assert_allclose(summed(grid(page), layer), rollout(every_layer[:layer + 1]), atol=1e-6)


def test_a_layer_picked_on_the_chart_reaches_the_page_and_leaves_the_charts_alone():
    page = run_page({"view": "heads", "layer": "1"})
    assert not [slider for slider in page.slider if slider.key == "layer"], "the chart picks the layer"
    before = [(chart.proto.spec, [d.data.data for d in chart.proto.datasets]) for chart in charts(page)]
    click(page, grid(page), {"layer": [{"layer": 4}]})
    assert page.query_params["layer"] == "4"
    assert page.subheader[0].value == "Every head of layer 4"
    assert [(chart.proto.spec, [d.data.data for d in chart.proto.datasets]) for chart in charts(page)] == before, (
        "the grid, its summary and the overview arrive again unchanged")
    assert shown_view(page) == ("heads", 4, 0)


def test_a_click_on_a_head_opens_the_layer_the_chart_shows():
    page = run_page({"view": "heads", "layer": "1"})
    click(page, grid(page), {"layer": [{"layer": 4}], "open_head": [{"head": 2}]})
    assert shown_view(page) == ("head", 4, 2)


def test_a_text_too_long_for_every_layer_sends_one_and_the_input_asks_for_the_next(bundled):
    text = "word " * 200  # 202 tokens: 6 · 12 · 202² weights
    assert ALL_LAYERS_WEIGHTS < 6 * 12 * 202**2
    page = run_page({"view": "heads", "text": text, "layer": "2"})
    assert layers_sent(page) == [2]
    spec = grid(page).proto.spec
    click(page, grid(page), {"layer": [{"layer": 5}]})
    assert layers_sent(page) == [5] and page.query_params["layer"] == "5"
    assert grid(page).proto.spec == spec, "the same chart, its numbers swapped"
    assert_pictures(page, head_weights(trace(bundled, TraceSettings(layer=5), text=text))[0])
    chart = grid(page)
    [pictures] = [dataset(chart, "summed-pictures")["url"]]
    ranges = dataset(chart, "summed-ranges")["value"].tolist()
    mean = aggregate_heads(head_weights(trace(bundled, TraceSettings(layer=5), text=text)), "mean")[0]
    shown = picture_values(pictures[0], mean.shape, ranges, "blues")
    np.testing.assert_allclose(shown, mean, atol=3 * (ranges[1] - ranges[0]) / 255)


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
    layer on the chart must leave every spec and dataset as it was: the browser already holds every layer."""
    page = run_page({"view": "heads", "layer": "1", "text": text})
    specs = [chart.proto.spec for chart in charts(page)]
    for spec in specs:
        VEGA_LITE.validate(json.loads(spec))
    layer_one = dataset(grid(page), "heads")
    click(page, grid(page), {"layer": [{"layer": 3}]})
    assert [chart.proto.spec for chart in charts(page)] == specs
    assert not dataset(grid(page), "heads").equals(layer_one), "layer 3's weights, not layer 1's"


@pytest.mark.parametrize(("query", "said"), [
    ({}, "the model's own weights"),
    ({"scaling": "none"}, "scaling (none)"),
    ({"source": "random", "head_dim": "48"}, "source (random)"),
])
def test_the_rollout_says_which_weights_it_multiplies(query, said):
    page = open_page({"view": "heads", "aggregate": "rollout", **query})
    assert_healthy(page)
    assert any(said in caption.value for caption in page.caption)


def grid_tokens_written(page: AppTest) -> list[str]:
    """The tokens the grid writes beside its small maps (its text marks' inline data), in order."""
    spec = json.loads(page.get("vega_lite_chart")[0].proto.spec)
    return [row["token"] for part in spec_parts(spec) if isinstance(part.get("data"), dict)
            for row in part["data"].get("values", []) if "token" in row]


def test_the_small_maps_write_their_tokens_beside_them_on_request():
    plain = open_page({"view": "heads"})
    assert_healthy(plain)
    assert grid_tokens_written(plain) == [], "no tokens unless asked"
    page = open_page({"view": "heads"})
    page.toggle(key="grid_tokens").set_value(True).run()
    assert_healthy(page)
    assert page.query_params["grid_tokens"] == "1"
    tokens = ["[CLS]", "time", "flies", "like", "an", "arrow", "[SEP]"]
    written = grid_tokens_written(page)
    # The query tokens left of each of the 3 rows of 4 maps, the key tokens under each of the 12 maps.
    assert written == tokens * 3 + tokens * 12


def test_a_long_texts_small_maps_write_every_few_tokens_and_grow():
    short, long = grid_layout(636, 7, True), grid_layout(636, 60, True)
    assert GRID_SIZE <= short.side < long.side and short.step == 1 < long.step
    assert grid_layout(636, 60, False).band == 0 and short.band > 0


def test_the_grid_rings_the_side_columns_head_from_its_data_and_keeps_its_spec():
    """The ring's head is a dataset the chart reads (grid.focus_frames): the Head slider moves the ring Vega draws,
    and the grid's spec, and so the chart in the browser, stay as they were."""
    page = open_page({"view": "heads"})
    [grid] = charts(page, "open_head")

    def ring(chart) -> list[str]:  # the ring's outline, as Vega draws it: its place
        return re.findall(r'<path d="([^"]*)" stroke="#d62728"', rendered.svg(chart))

    before = grid.proto.spec
    assert len(ring(grid)) == 1
    at_first = ring(grid)
    page.slider(key="head").set_value(5).run()
    assert_healthy(page)
    [moved] = charts(page, "open_head")
    assert moved.proto.spec == before, "the head is data: the grid's spec stays"
    assert len(ring(moved)) == 1 and ring(moved) != at_first, "the ring moved to head 5"


def test_the_overview_marks_the_side_columns_head_from_its_data_and_keeps_its_spec():
    """The overview's head axis writes the side column's head in red and bold, a head read from a dataset of its own:
    the Head slider moves the mark Vega draws, and the overview's spec, and so the chart in the browser, stay."""
    page = open_page({"view": "heads"})
    [overview] = charts(page, "open_cell")

    def marked(chart) -> list[str]:  # the head labels drawn in the ring's red, as Vega draws them
        return re.findall(r'<text[^>]*fill="#d62728"[^>]*>([^<]*)</text>', rendered.svg(chart))

    before = overview.proto.spec
    assert marked(overview) == ["0"]
    assert OVERVIEW_TITLE.split(":")[0] in rendered.svg(overview), "its title, beside the layer that holds the head"
    page.slider(key="head").set_value(5).run()
    assert_healthy(page)
    [moved] = charts(page, "open_cell")
    assert moved.proto.spec == before, "the head is data: the overview's spec stays"
    assert marked(moved) == ["5"]


def test_a_new_text_of_as_many_tokens_keeps_the_grids_and_the_overviews_specs():
    """Both are built once for every text of its length: a new text brings its numbers, and the summary's tokens, as
    datasets, which the browser swaps into the charts it drew (a new spec is a chart Vega builds again)."""
    page = run_page({"view": "heads", "text": "the cat sat on the mat"})

    def specs() -> list[str]:
        return [grid(page).proto.spec, charts(page, "open_cell")[0].proto.spec]

    before, numbers = specs(), chart_matrix(charts(page, "open_cell")[0])
    page.text_area(key="text").set_value("a dog lay by a door").run()
    assert_healthy(page)
    assert specs() == before
    drawn = rendered.svg(grid(page))
    assert ">dog<" in drawn and ">door<" in drawn and ">cat<" not in drawn, "the summary's axes name the new tokens"
    assert not np.allclose(chart_matrix(charts(page, "open_cell")[0]), numbers), "the overview's numbers are new"
