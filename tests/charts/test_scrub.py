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


def test_a_long_text_sends_a_window_of_layers_as_pictures_and_each_is_the_cores_head(bundled):
    text = "the quick brown fox jumps over the lazy dog " * 20  # 182 tokens: pictures, six layers too many, five fit
    page = open_page({"text": text, "layer": "3", "head": "2"})
    assert_healthy(page)
    [chart] = charts(page)
    data = datasets(chart)
    pictures, ranges = data["p0-pictures"], data["p0-ranges"]
    window = send_plan(6, 12, 182, 182, layer=3, head=2)[0]
    assert len(window) == 5 and {2, 3, 4} <= set(window), "the next layer either way is in the browser already"
    assert set(pictures["layer"]) == set(window) and len(pictures) == 5 * 12
    encoding = encode(bundled, text)
    for head in (2, 9):
        weights = build_trace(bundled, encoding, TraceSettings(layer=3, head=head))["weights"][0]
        domain = ranges[(ranges["layer"] == 3) & (ranges["head"] == head)]["value"].tolist()
        url = pictures[(pictures["layer"] == 3) & (pictures["head"] == head)]["url"].item()
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


def test_a_deep_models_cells_are_a_window_of_layers_each_head_where_the_chart_reads_it(tmp_path, monkeypatch):
    """12 layers of 4 heads at 60 tokens are 172,800 cells, over the 131,072 sent at once: 9 layers are sent, and the
    chart's column expression counts from the window's first, so the head it draws is the core's."""
    from attention.models.loading import load_model
    from harness.checkpoints import tiny_llama

    folder = tiny_llama(tmp_path / "deep", num_hidden_layers=12)
    text = "wxyz" * 15  # 60 tokens, a letter each (the tiny byte-level tokenizer has no merges)
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(folder))
    page = open_page({"model": str(folder), "text": text, "layer": "10", "head": "1"})
    assert_healthy(page)
    [chart] = charts(page)
    cells = datasets(chart)["p0-cells"]
    loaded = load_model(str(folder))
    encoding = encode(loaded, text)
    assert encoding.num_tokens == 60
    window = send_plan(12, 4, 60, 60, layer=10, head=1)[0]
    assert window == tuple(range(3, 12)) and len([name for name in cells.columns if name.isdigit()]) == 9 * 4
    assert "- 3) * 4" in chart.proto.spec
    for layer, head in ((10, 1), (3, 0), (11, 3)):
        expected = build_trace(loaded, encoding, TraceSettings(layer=layer, head=head))["weights"][0]
        np.testing.assert_allclose(matrix_of(cells, (layer - 3) * 4 + head), expected, atol=1e-6)
    assert chart_picks(chart) == {"layer": 10, "head": 1}


def test_a_deep_models_window_holds_the_next_layer_either_way_and_moves_seldom():
    """SmolLM2-135M's 30 layers of 9 heads at 32 tokens: 14 layers fit. From any layer the next one either way is
    in the window already, drawn with no round trip; the window changes once every 7 moves, not at every move."""
    windows = [send_plan(30, 9, 32, 32, layer=layer, head=0)[0] for layer in range(30)]
    for layer, window in enumerate(windows):
        assert window == tuple(range(window[0], window[0] + 14))
        assert {max(layer - 1, 0), layer, min(layer + 1, 29)} <= set(window), layer
    assert len(set(windows)) == 4
    assert send_plan(6, 12, 250, 250, layer=1, head=0) == ((1,), tuple(range(12))), "two layers fit: one is sent"


def test_the_send_plan_keeps_to_its_budgets():
    assert send_plan(6, 12, 32, 32, layer=2, head=5) == (tuple(range(6)), tuple(range(12)))
    assert send_plan(6, 12, 512, 512, layer=2, head=5) == ((2,), tuple(range(12)))
    assert send_plan(1, 384, 512, 512, layer=0, head=7) == ((0,), (7,)), "384 heads of 512 tokens: one head"
    assert send_plan(6, 12, 128, 128, layer=2, head=5, drawn_as="lines") == ((2,), tuple(range(12)))
