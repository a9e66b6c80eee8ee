"""The neuron view through AppTest: q, K, q ⊙ K and the table of scores agree with the trace."""

from __future__ import annotations

import numpy as np
from streamlit.testing.v1 import AppTest

from attention import TraceSettings, build_trace, encode
from tests import pages
from tests.pages import chart_matrix, open_page, warnings

TEXT = "time flies like an arrow"  # [CLS] time flies like an arrow [SEP]: 7 tokens


def run_page(query: dict[str, str]) -> AppTest:
    page = open_page(query)
    pages.assert_healthy(page)
    return page


def assert_healthy(page: AppTest) -> None:
    pages.assert_healthy(page)
    assert len(page.get("vega_lite_chart")) == 3, "q, K and q ⊙ K"


def table(page: AppTest):
    return pages.html_table(page, "neuron-table")


def test_neuron_view_shows_the_heads_numbers_for_one_query(bundled):
    page = run_page({"view": "neuron", "layer": "3", "head": "7", "scaling": "none", "query": "2"})
    assert_healthy(page)
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=3, head=7, scaling="none"))
    numbers = table(page)
    assert list(numbers.columns) == ["key", "key token", "q · k", "scaled", "weight"]
    assert numbers["key token"].tolist() == list(trace.tokens[0])
    np.testing.assert_allclose(numbers["q · k"], trace["scores"][0, 2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(numbers["scaled"], trace["scaled"][0, 2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(numbers["weight"], trace["weights"][0, 2], rtol=1e-5, atol=1e-6)
    query, keys, products = (chart_matrix(chart) for chart in page.get("vega_lite_chart"))
    np.testing.assert_allclose(query, trace["Q"][0, 2:3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(keys, trace["K"][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(products, trace["Q"][0, 2] * trace["K"][0], rtol=1e-6)
    assert page.selectbox(key="query").value == 2


def test_softmax_is_the_one_head_views_row():
    settings = {"layer": "1", "head": "4", "scaling": "linear"}
    neuron = run_page({"view": "neuron", "query": "5", **settings})
    one_head = run_page(settings)
    weights = chart_matrix(one_head.get("vega_lite_chart")[0])  # computed with every head of the layer at once
    np.testing.assert_allclose(table(neuron)["weight"], weights[5], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(table(neuron)["weight"].sum(), 1.0, atol=1e-6)


def test_switching_the_query_updates_the_table_and_the_url(bundled):
    page = run_page({"view": "neuron"})
    assert page.selectbox(key="query").options == [
        "0: [CLS]", "1: time", "2: flies", "3: like", "4: an", "5: arrow", "6: [SEP]"]
    page.selectbox(key="query").set_value(4).run()
    assert_healthy(page)
    assert page.query_params["query"] == "4"
    expected = build_trace(bundled, encode(bundled, TEXT), TraceSettings())["weights"][0, 4]
    np.testing.assert_allclose(table(page)["weight"], expected, rtol=1e-5, atol=1e-6)


def test_a_query_past_the_end_of_the_text_is_clamped_with_a_notice():
    page = run_page({"view": "neuron", "query": "999"})
    assert "query=999 does not exist (the text has 7 tokens: 0 to 6); showing query=6." in warnings(page)
    assert page.selectbox(key="query").value == 6
    assert page.query_params["query"] == "6"
    assert len(table(page)) == 7


def test_a_shorter_text_moves_the_query_to_its_last_token():
    page = run_page({"view": "neuron", "query": "5"})
    page.text_area(key="text").input("hi").run()
    assert_healthy(page)
    assert "query=5 does not exist (the text has 3 tokens: 0 to 2); showing query=2." in warnings(page)
    assert page.selectbox(key="query").value == 2
    assert page.query_params["query"] == "2"


def test_tokens_from_the_text_are_shown_as_text_never_as_markdown():
    page = run_page({"view": "neuron", "text": "<b>hi</b> *there*"})
    assert_healthy(page)
    tokens = table(page)["key token"].tolist()
    assert tokens[:5] == ["[CLS]", "<", "b", ">", "hi"]
    assert "1: <" in page.selectbox(key="query").options
    assert not [m.value for m in page.markdown if "<b>" in m.value or "*there*" in m.value]


def test_identity_source_shows_vectors_of_size_c(bundled):
    page = run_page({"view": "neuron", "source": "identity", "query": "3"})
    assert_healthy(page)
    query, keys, _ = (chart_matrix(chart) for chart in page.get("vega_lite_chart"))
    assert query.shape == (1, 384) and keys.shape == (7, 384)
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(source="identity"))
    np.testing.assert_allclose(table(page)["weight"], trace["weights"][0, 3], rtol=1e-5, atol=1e-6)
