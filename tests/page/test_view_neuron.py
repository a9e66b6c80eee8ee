"""The neuron view through AppTest: its one chart holds q, K and the row's numbers of every head and query
token, and what its own head and query inputs pick agrees with the trace of that head."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.charts.neuron_chart import (
    DRAWN_DIMENSIONS,
    FIRST_DIMENSION,
    KEYS,
    NEURON_CELLS,
    QUERIES,
    ROWS,
    send_plan,
)
from tests import pages
from tests.pages import chart_inputs, chart_picks, open_page, pick_on_chart, warnings

TEXT = "time flies like an arrow"  # [CLS] time flies like an arrow [SEP]: 7 tokens
KEY = "chart-neuron"


def run_page(query: dict[str, str]) -> AppTest:
    page = open_page(query)
    pages.assert_healthy(page)
    assert len(page.get("vega_lite_chart")) == 1, "q, K, q ⊙ K and the numbers: one chart"
    return page


def datasets(page: AppTest) -> dict[str, pd.DataFrame]:
    [chart] = page.get("vega_lite_chart")
    return {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets}


def shown(page: AppTest) -> dict[str, np.ndarray]:
    """What the chart draws for the head and query its inputs stand at: the data its filters keep."""
    [chart] = page.get("vega_lite_chart")
    picks, data = chart_picks(chart), datasets(page)
    head, query = picks["head"], picks["query"]
    query_line = data[QUERIES][(data[QUERIES]["head"] == head) & (data[QUERIES]["query"] == query)]
    keys = data[KEYS][data[KEYS]["head"] == head].sort_values("key")
    numbers = data[ROWS][(data[ROWS]["head"] == head) & (data[ROWS]["query"] == query)]
    assert len(query_line) == 1 and len(numbers) == 1, (head, query)
    tokens = len(keys)
    dims = [c for c in data[KEYS].columns if c.isdigit()]
    return {
        "head": head, "query": query,
        "q": query_line[dims].to_numpy()[0],
        "keys": keys[dims].to_numpy(),
        "dots": numbers[[f"s{j}" for j in range(tokens)]].to_numpy()[0],
        "scaled": numbers[[f"m{j}" for j in range(tokens)]].to_numpy()[0],
        "weights": numbers[[f"w{j}" for j in range(tokens)]].to_numpy()[0],
    }


def assert_numbers_of(page: AppTest, model, settings: TraceSettings, query: int, text: str = TEXT) -> None:
    """The chart shows, at its inputs, the numbers of the trace of that head, for that query."""
    trace = build_trace(model, encode(model, text), settings)
    numbers = shown(page)
    assert (numbers["head"], numbers["query"]) == (settings.head, query)
    np.testing.assert_allclose(numbers["q"], trace["Q"][0, query], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(numbers["keys"], trace["K"][0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(numbers["dots"], trace["scores"][0, query], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(numbers["scaled"], trace["masked"][0, query], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(numbers["weights"], trace["weights"][0, query], rtol=1e-5, atol=1e-7)
    # What the browser computes itself: q_i · k_j,i, summed over i, is the score it shows.
    np.testing.assert_allclose((numbers["q"] * numbers["keys"]).sum(axis=-1), numbers["dots"], rtol=1e-4,
                               atol=1e-4)


def test_neuron_view_shows_the_heads_numbers_for_one_query(bundled):
    page = run_page({"view": "neuron", "layer": "3", "head": "7", "scaling": "none", "query": "2"})
    assert_numbers_of(page, bundled, TraceSettings(layer=3, head=7, scaling="none"), 2)
    assert chart_inputs(page.get("vega_lite_chart")[0]) == {"head": (0, 11), "query": (0, 6)}
    assert "Query token 2 (flies), layer 3, head 7." in page.caption[1].value


def test_a_head_as_wide_as_the_model_is_drawn_a_window_of_dimensions_at_a_time(bundled):
    """The identity source's one head is 384 numbers wide: every one is sent, and the chart draws DRAWN_DIMENSIONS
    of them at a time, from a first dimension its own input moves in steps of that many."""
    page = run_page({"view": "neuron", "source": "identity", "query": "3"})
    assert_numbers_of(page, bundled, TraceSettings(source="identity"), 3)
    [chart] = page.get("vega_lite_chart")
    assert chart_inputs(chart) == {"head": (0, 0), "query": (0, 6)}
    assert window_input(chart) == {"min": 0, "max": 384 - DRAWN_DIMENSIONS, "step": DRAWN_DIMENSIONS,
                                   "input": "range", "name": "Dimensions from"}
    assert f"drawn {DRAWN_DIMENSIONS} dimensions at a time" in " ".join(caption.value for caption in page.caption)
    trained = run_page({"view": "neuron", "query": "3"}).get("vega_lite_chart")[0]
    assert window_input(trained) is None, "a head of 32 numbers is drawn whole"


def window_input(chart) -> dict | None:
    """The input of the chart's window of dimensions, or None."""
    windows = [p["bind"] for p in json.loads(chart.proto.spec)["params"] if p["name"] == FIRST_DIMENSION]
    return windows[0] if windows else None


def test_every_head_and_query_of_a_short_text_are_sent_once():
    data = datasets(run_page({"view": "neuron"}))
    assert sorted(set(data[QUERIES]["head"])) == list(range(12))
    assert len(data[QUERIES]) == len(data[ROWS]) == 12 * 7 and len(data[KEYS]) == 12 * 7
    for lines in (data[QUERIES], data[ROWS]):  # the browser reads the picked line by its place
        assert (lines["head"].astype(int) * 7 + lines["query"]).tolist() == list(range(12 * 7))
    assert (data[KEYS]["head"].astype(int) * 7 + data[KEYS]["key"]).tolist() == list(range(12 * 7))


def test_q_and_the_keys_are_coloured_the_same_for_every_query_of_a_head():
    data = datasets(run_page({"view": "neuron"}))
    dims = [c for c in data[KEYS].columns if c.isdigit()]
    for head in range(12):
        keys, queries = (data[name][data[name]["head"] == head][dims].to_numpy() for name in (KEYS, QUERIES))
        bound = data[KEYS][data[KEYS]["head"] == head]["bound"]
        assert set(bound) == {max(np.abs(keys).max(), np.abs(queries).max())}


def test_the_softmax_is_the_one_head_views_row():
    settings = {"layer": "1", "head": "4", "scaling": "linear"}
    neuron = run_page({"view": "neuron", "query": "5", **settings})
    one_head = open_page(settings)
    weights = pages.chart_matrix(one_head.get("vega_lite_chart")[0])
    np.testing.assert_allclose(shown(neuron)["weights"], weights[5], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(shown(neuron)["weights"].sum(), 1.0, atol=1e-6)


def test_moving_the_charts_query_and_head_moves_the_caption_and_the_url(bundled):
    page = run_page({"view": "neuron"})
    before = json.loads(page.get("vega_lite_chart")[0].proto.spec)
    pick_on_chart(page, KEY, head=9, query=4)
    pages.assert_healthy(page)
    assert (page.query_params["head"], page.query_params["query"]) == ("9", "4")
    assert "Query token 4 (an), layer 0, head 9." in page.caption[1].value
    assert_numbers_of(page, bundled, TraceSettings(head=9), 4)
    assert json.loads(page.get("vega_lite_chart")[0].proto.spec) == before, "the chart that moved stays as it is"


def test_a_query_past_the_end_of_the_text_is_clamped_with_a_notice():
    page = run_page({"view": "neuron", "query": "999"})
    assert "query=999 does not exist (the text has 7 tokens: 0 to 6); showing query=6." in warnings(page)
    assert chart_picks(page.get("vega_lite_chart")[0])["query"] == 6
    assert page.query_params["query"] == "6"


def test_a_shorter_text_moves_the_query_to_its_last_token():
    page = run_page({"view": "neuron", "query": "5"})
    page.text_area(key="text").input("hi").run()
    pages.assert_healthy(page)
    assert "query=5 does not exist (the text has 3 tokens: 0 to 2); showing query=2." in warnings(page)
    assert chart_picks(page.get("vega_lite_chart")[0])["query"] == 2
    assert page.query_params["query"] == "2"


@pytest.mark.parametrize(("tokens", "sent"), [
    (32, ("every head", "every query")),
    (128, ("one head", "every query")),
    (512, ("one head", "one query")),
])
def test_the_send_plan_keeps_to_its_budget(tokens, sent):
    def cells(heads: int, queries: int) -> int:  # what the browser is sent: per head its keys, per query q and 3 rows
        return heads * tokens * 32 + heads * queries * (32 + 3 * tokens)

    heads, queries = send_plan(12, tokens, 32, head=5, query=7)
    assert (("every head" if len(heads) == 12 else "one head"),
            ("every query" if len(queries) == tokens else "one query")) == sent
    assert heads == (tuple(range(12)) if len(heads) == 12 else (5,))
    assert queries == (tuple(range(tokens)) if len(queries) == tokens else (7,))
    assert cells(len(heads), len(queries)) <= NEURON_CELLS, "within the budget"
    if len(heads) == 1:
        assert cells(12, tokens) > NEURON_CELLS, "and no smaller than it needs to be: every head would not fit"
    if len(queries) == 1:
        assert cells(1, tokens) > NEURON_CELLS, "every query of one head would not fit"


def test_a_long_text_sends_one_head_and_its_head_input_reruns(bundled):
    text = " ".join(["word"] * 126)  # 128 tokens: every query of one head
    page = run_page({"view": "neuron", "text": text, "head": "3", "query": "10"})
    data = datasets(page)
    assert set(data[QUERIES]["head"]) == {3} and len(data[QUERIES]) == 128
    pick_on_chart(page, KEY, head=8)
    pages.assert_healthy(page)
    assert set(datasets(page)[QUERIES]["head"]) == {8}
    assert_numbers_of(page, bundled, TraceSettings(head=8), 10, text=text)


def test_the_caption_says_its_q_dot_k_is_the_raw_sum_that_bertviz_writes_scaled():
    page = open_page({"view": "neuron"})
    pages.assert_healthy(page)
    assert "q · k is the raw sum, before scaling: bertviz's neuron view writes q · k for the scaled score" in \
        page.caption[1].value


def test_on_gpt2_the_keys_after_the_query_have_no_numbers(tiny_gpt2_checkpoint, tiny_gpt2_model, monkeypatch):
    """As bertviz's neuron view does for GPT-2: a query's row holds its own key and those before it only."""
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    text = "what if it rains tomorrow"
    page = run_page({"view": "neuron", "model": str(tiny_gpt2_checkpoint), "text": text, "query": "2", "head": "1"})
    numbers = shown(page)
    trace = build_trace(tiny_gpt2_model, encode(tiny_gpt2_model, text), TraceSettings(head=1))
    for name in ("dots", "scaled", "weights"):
        assert np.isnan(numbers[name][3:]).all(), name
        assert not np.isnan(numbers[name][:3]).any(), name
    np.testing.assert_allclose(numbers["weights"][:3], trace["weights"][0, 2, :3], atol=1e-6)
    assert numbers["weights"][:3].sum() == pytest.approx(1.0, abs=1e-5)
