"""The one-head view's charts hold every head sent to the browser: each slice must be the core's numbers.

What the browser draws for a layer and head is the column of the chart's cells its formula picks, or the
rows its filters keep (components/charts/scrub.py). Here every head sent is compared with a trace of that head,
for each stage and for the lines; and the chart's picks are checked to start where the page stands.
tests/browser/test_scrub_e2e.py moves the inputs in Chromium.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.charts.lines import LINE_THRESHOLD, LINES_MOST
from components.charts.scrub import send_plan
from tests.pages import assert_healthy, chart_picks, chart_title, charts, open_page, pick_on_chart, picture_values

TEXT = "time flies like an arrow"
STAGES = {"Attention weights": "weights", "Raw scores Q·Kᵀ": "scores", "Scaled scores": "scaled",
          "Masked scores": "masked", "Context vectors": "context"}


def datasets(chart) -> dict[str, pd.DataFrame]:
    return {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets}


def matrix_of(cells: pd.DataFrame, place: int) -> np.ndarray:
    """(R, K) of one head from a chart's cells: row, column, then every head sent in columns "0", "1", …"""
    rows, columns = cells["row"].max() + 1, cells["column"].max() + 1
    matrix = np.full((rows, columns), np.nan, dtype=np.float32)
    matrix[cells["row"], cells["column"]] = cells[str(place)]
    return matrix


@pytest.mark.parametrize("stage", list(STAGES))
def test_every_head_of_every_layer_is_in_the_chart_and_each_is_the_cores(stage, bundled):
    page = open_page({"text": TEXT, "scaling": "temperature", "temperature": "2"})
    page.segmented_control(key="head_stage").set_value(stage).run()
    assert_healthy(page)
    [chart] = charts(page)
    cells = datasets(chart)["p0-cells"]
    assert [name for name in cells.columns if name.isdigit()] == [str(place) for place in range(6 * 12)]
    encoding = encode(bundled, TEXT)
    for layer, head in ((0, 0), (2, 5), (5, 11)):
        expected = build_trace(bundled, encoding, TraceSettings(layer=layer, head=head, scaling="temperature",
                                                                temperature=2.0))[STAGES[stage]][0]
        np.testing.assert_allclose(matrix_of(cells, layer * 12 + head), expected, atol=1e-5)


def test_a_long_text_sends_one_layer_of_pictures_and_each_is_the_cores_head(bundled):
    text = "the quick brown fox jumps over the lazy dog " * 20  # 182 tokens: pictures, and six layers too many
    page = open_page({"text": text, "layer": "3", "head": "2"})
    assert_healthy(page)
    [chart] = charts(page)
    data = datasets(chart)
    pictures, ranges = data["p0-pictures"], data["p0-ranges"]
    assert set(pictures["layer"]) == {3} and list(pictures["head"]) == list(range(12))
    encoding = encode(bundled, text)
    for head in (2, 9):
        weights = build_trace(bundled, encoding, TraceSettings(layer=3, head=head))["weights"][0]
        domain = ranges[ranges["head"] == head]["value"].tolist()
        url = pictures[pictures["head"] == head]["url"].item()
        # Read back through the colour ramp, as the all-heads tests do: a few of its 256 steps apart at most.
        np.testing.assert_allclose(picture_values(url, weights.shape, domain, "blues"), weights,
                                   atol=3 * (domain[1] - domain[0]) / 255)
    assert chart_picks(chart) == {"layer": 3, "head": 2}


def test_the_lines_are_every_weight_above_the_threshold_of_the_picked_head(bundled):
    page = open_page({"text": TEXT, "text_b": "fruit flies like a banana", "layer": "1", "head": "4"})
    page.segmented_control(key="head_stage").set_value("Weights as lines").run()
    assert_healthy(page)
    [chart] = charts(page)
    data = datasets(chart)
    lines, tokens = data["lines"], data["tokens"]
    weights = build_trace(bundled, encode(bundled, TEXT, "fruit flies like a banana"),
                          TraceSettings(layer=1, head=4))["weights"][0]
    drawn = lines[(lines["layer"] == 1) & (lines["head"] == 4)]
    expected = np.argwhere(weights >= LINE_THRESHOLD)
    assert sorted(zip(drawn["q"], drawn["k"], strict=True)) == [tuple(pair) for pair in expected]
    np.testing.assert_allclose(drawn["w"], weights[drawn["q"], drawn["k"]], atol=1e-7)
    assert list(tokens[tokens["side"] == "q"]["token"]) == list(encode(bundled, TEXT, "fruit flies like a banana")
                                                                .tokens[0])
    assert chart_picks(chart) == {"layer": 1, "head": 4}


@pytest.mark.parametrize("start", [0, 20])
def test_a_long_texts_lines_are_a_window_of_its_tokens_with_the_cores_weights(bundled, start):
    text = "the quick brown fox jumps over the lazy dog and then what if it rains " * 7  # 107 tokens
    page = open_page({"text": text, "layer": "2", "head": "3"})
    page.segmented_control(key="head_stage").set_value("Weights as lines").run()
    if start:
        page.slider(key="lines_from").set_value(start).run()
    assert_healthy(page)
    [chart] = charts(page)
    data = datasets(chart)
    lines, tokens = data["lines"], data["tokens"]
    encoding = encode(bundled, text)
    weights = build_trace(bundled, encoding, TraceSettings(layer=2, head=3))["weights"][0][start:start + LINES_MOST,
                                                                                          start:start + LINES_MOST]
    drawn = lines[(lines["layer"] == 2) & (lines["head"] == 3)]
    expected = [tuple(pair) for pair in np.argwhere(weights >= LINE_THRESHOLD)]
    assert sorted(zip(drawn["q"], drawn["k"], strict=True)) == expected
    np.testing.assert_allclose(drawn["w"], weights[drawn["q"], drawn["k"]], atol=1e-7)
    assert list(tokens[tokens["side"] == "q"]["token"]) == list(encoding.tokens[0][start:start + LINES_MOST])
    assert f"queries {start}–{start + LINES_MOST - 1}" in chart_title(chart)


def test_a_chart_drawn_anew_starts_where_the_page_stands():
    page = open_page({"text": TEXT})
    pick_on_chart(page, "chart-weights", layer=4, head=9)
    assert_healthy(page)
    assert (page.query_params["layer"], page.query_params["head"]) == ("4", "9")
    page.segmented_control(key="head_stage").set_value("Raw scores Q·Kᵀ").run()
    assert chart_picks(charts(page)[0]) == {"layer": 4, "head": 9}, "the new chart's inputs start at 4, 9"


def test_the_send_plan_keeps_to_its_budgets():
    assert send_plan(6, 12, 32, 32, layer=2, head=5) == (tuple(range(6)), tuple(range(12)))
    assert send_plan(6, 12, 512, 512, layer=2, head=5) == ((2,), tuple(range(12)))
    assert send_plan(1, 384, 512, 512, layer=0, head=7) == ((0,), (7,)), "384 heads of 512 tokens: one head"
    assert send_plan(6, 12, 128, 128, layer=2, head=5, drawn_as="lines") == ((2,), tuple(range(12)))
