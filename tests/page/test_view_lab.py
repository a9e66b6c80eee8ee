"""The scaling lab through AppTest: its four charts, and that what they draw is what theory says."""

from __future__ import annotations

import json
import math

import altair as alt
import jsonschema
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from attention.dissect.trace import build_trace
from attention.labs.scaling_lab import head_softmax_statistics, random_softmax_statistics, temperature_row
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from tests.pages import assert_healthy, chart_values, open_page, pick_on_chart, title_text

TEXT = "time flies like an arrow"  # the page's default: 7 tokens with [CLS] and [SEP]
TITLES = {
    "variance": "var(q·k)",
    "random": "random keys",
    "trained": "Bars are the mean",
    "temperature": "softmax(raw scores / τ)",
}
VEGA_LITE = jsonschema.Draft7Validator(alt.load_schema())  # the schema of the Vega-Lite Altair writes


def run_lab(**query: str) -> AppTest:
    return open_page({"view": "lab", **query})


def chart_data(page: AppTest, which: str) -> pd.DataFrame:
    """The rows of the lab chart whose title names `which`."""
    for chart in page.get("vega_lite_chart"):
        if TITLES[which] in json.dumps(json.loads(chart.proto.spec).get("title", ""), ensure_ascii=False):
            return chart_values(chart)
    raise AssertionError(f"no {which} chart on the page")


def chart_title(page: AppTest, which: str) -> str:
    titles = [title_text(json.loads(chart.proto.spec).get("title", "")) for chart in page.get("vega_lite_chart")]
    return next(t for t in titles if TITLES[which] in t)


@pytest.fixture(scope="module")
def lab() -> AppTest:
    return run_lab()


def test_the_lab_opens_from_its_link_and_draws_four_charts(lab):
    assert_healthy(lab)
    assert len(lab.get("vega_lite_chart")) == 4
    for which in TITLES:
        assert not chart_data(lab, which).empty
    assert "measured against 512 at d_k = 512" in "\n".join(m.value for m in lab.markdown)


def test_measured_variance_is_d_k_and_root_d_k_brings_it_to_one(lab):
    table = chart_data(lab, "variance")
    by_series = {name: rows.set_index("d_k")["variance"] for name, rows in table.groupby("series")}
    head_sizes = by_series["d_k (theory)"].index.to_numpy()
    assert head_sizes.tolist() == [2**p for p in range(10)]
    np.testing.assert_allclose(by_series["d_k (theory)"], head_sizes)
    np.testing.assert_allclose(by_series["q·k measured"], head_sizes, rtol=0.10)
    np.testing.assert_allclose(by_series["q·k / √d_k"], 1.0, rtol=0.10)
    np.testing.assert_allclose(by_series["q·k / d_k"], 1.0 / head_sizes, rtol=0.10)


def test_entropy_falls_unscaled_and_stays_flat_with_root_d_k(lab):
    table = chart_data(lab, "random")
    entropy = {name: rows.set_index("d_k")["entropy"] for name, rows in table.groupby("scaling")}
    largest = {name: rows.set_index("d_k")["max_weight"] for name, rows in table.groupby("scaling")}
    unscaled, root, linear = entropy["none"], entropy["÷ √d_k"], entropy["÷ d_k"]
    assert (np.diff(unscaled.to_numpy()) < 0).all(), "every doubling of d_k sharpens the unscaled softmax"
    assert unscaled.iloc[-1] < 0.1 * unscaled.iloc[0]
    assert largest["none"].iloc[-1] > 0.9
    assert root.max() - root.min() < 0.1 * root.mean()
    assert linear.iloc[-1] == pytest.approx(math.log(7), rel=0.01), "d_k flattens towards uniform over 7 tokens"
    np.testing.assert_allclose(entropy["÷ τ = 1"], unscaled, err_msg="τ = 1 divides by nothing")


def test_trained_heads_are_measured_on_the_model(bundled):
    page = run_lab(layer="2", scaling="temperature", temperature="3")
    assert_healthy(page)
    table = chart_data(page, "trained")
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=2))
    expected = head_softmax_statistics(trace["Q split"][0], trace["K split"][0],
                                       ("none", "sqrt", "linear", "temperature"), temperature=3.0)
    for label, scaling in (("none", "none"), ("÷ √d_k", "sqrt"), ("÷ d_k", "linear"), ("÷ τ = 3", "temperature")):
        rows = table[table["scaling"] == label].sort_values("head")
        assert len(rows) == 12
        np.testing.assert_allclose(rows["entropy"], expected[scaling]["entropy"], rtol=1e-5)
        np.testing.assert_allclose(rows["max_weight"], expected[scaling]["max_weight"], rtol=1e-5)
    assert "3 · The model's trained heads, layer 2" in [heading.value for heading in page.subheader]


def test_temperature_rows_sum_to_one_and_sharpen_as_tau_falls(bundled):
    page = run_lab(layer="1", head="3", scaling="temperature", temperature="3")
    assert_healthy(page)
    table = chart_data(page, "temperature")
    taus = sorted(table["tau"].unique())
    assert 3.0 in taus and round(32**0.5, 2) in taus
    rows = table.groupby("tau")["weight"]
    np.testing.assert_allclose(rows.sum().to_numpy(), 1.0, atol=1e-5)
    assert (np.diff(rows.max().to_numpy()) < 0).all(), "a smaller τ gives a larger largest weight"
    scores = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=1, head=3))["scores"][0]
    drawn = table.sort_values(["tau", "position"])["weight"].to_numpy().reshape(len(taus), -1)
    np.testing.assert_allclose(drawn, temperature_row(scores[1], taus), atol=1e-6)


def test_the_query_selector_picks_the_row(bundled):
    page = run_lab(head="5")
    page.selectbox(key="query").set_value(4).run()
    assert_healthy(page)
    assert any(caption.value.startswith("Query token 4: ") for caption in page.caption)
    assert page.query_params["query"] == "4"
    scores = build_trace(bundled, encode(bundled, TEXT), TraceSettings(head=5))["scores"][0]
    drawn = chart_data(page, "temperature")
    at_one = drawn[drawn["tau"] == 1.0].sort_values("position")["weight"].to_numpy()
    np.testing.assert_allclose(at_one, temperature_row(scores[4], [1.0])[0], atol=1e-6)


def test_a_query_beyond_the_text_falls_back_to_token_one():
    page = run_lab(query="40")
    assert_healthy(page)
    assert page.selectbox(key="query").value == 1


def test_every_spec_is_valid_vega_lite_and_a_move_of_tau_only_swaps_data():
    """The lab skips Altair's validation when it draws: the specs are checked here, once. Moving τ (on the
    random-softmax chart's own input) must leave every spec as it was (τ's label lives in the data, the input
    keeps its anchor), so that the browser only swaps the numbers in."""
    page = run_lab(scaling="temperature", temperature="1.5")
    specs = [chart.proto.spec for chart in page.get("vega_lite_chart")]
    for spec in specs:
        VEGA_LITE.validate(json.loads(spec))
    pick_on_chart(page, "chart-random-softmax", temperature=2.0)
    assert_healthy(page)
    assert page.query_params["temperature"] == "2"
    assert [chart.proto.spec for chart in page.get("vega_lite_chart")] == specs
    for which in ("random", "trained"):
        assert "÷ τ = 2" in set(chart_data(page, which)["scaling"])
    assert 2.0 in set(chart_data(page, "temperature")["tau"])


def test_random_softmax_is_the_same_experiment_at_every_tau():
    """The random scores are drawn once and only rescaled per τ: the numbers are those of a fresh run."""
    page = run_lab(scaling="temperature", temperature="1.5")
    pick_on_chart(page, "chart-random-softmax", temperature=3.0)
    table = chart_data(page, "random")
    expected = random_softmax_statistics([2**p for p in range(10)], 7, ("none", "sqrt", "linear", "temperature"),
                                         temperature=3.0, rows=1_024)
    for label, scaling in (("none", "none"), ("÷ √d_k", "sqrt"), ("÷ d_k", "linear"), ("÷ τ = 3", "temperature")):
        rows = table[table["scaling"] == label].sort_values("d_k")
        np.testing.assert_array_equal(rows["entropy"], expected[scaling]["entropy"])
        np.testing.assert_array_equal(rows["max_weight"], expected[scaling]["max_weight"])


def test_its_words_send_the_reader_to_the_controls_beside_the_view_not_to_the_sidebar():
    page = open_page({"view": "lab"})
    assert_healthy(page)
    said = "\n".join(element.value for element in [*page.markdown, *page.caption])
    assert "move the τ slider above the chart" in said
    assert "sidebar" not in said, "τ is on the chart; the source, the layer and the head are beside the view"


def test_the_random_chart_holds_every_tau_of_the_slider_each_as_the_core_computes_it():
    """Every τ the input offers is in the chart's data (so that the browser switches with no rerun), and each
    τ's numbers are those of a fresh run of the core at that τ alone; the fixed scalings' rows, the same at every
    τ, are sent once, with no τ, and the chart's τ filter keeps them."""
    page = run_lab()
    [chart] = [c for c in page.get("vega_lite_chart") if TITLES["random"] in c.proto.spec]
    blob = max((d.data.data for d in chart.proto.datasets), key=len)
    rows = pa.ipc.open_stream(blob).read_all().to_pandas()
    taus = np.round(np.arange(1, 401) * 0.05, 2)
    np.testing.assert_array_equal(np.sort(rows.loc[rows["rank"] == 3, "temperature"].unique()), taus)
    fixed = rows[rows["rank"] < 3]
    assert fixed["temperature"].isna().all() and len(fixed) == 3 * 10, "each fixed scaling's 10 head sizes, once"
    assert "!isValid(datum.temperature) ||" in chart.proto.spec
    for tau in (0.05, 0.7, 13.35, 20.0):
        expected = random_softmax_statistics([2**p for p in range(10)], 7, ("temperature",), temperature=tau,
                                             rows=1_024)["temperature"]
        drawn = rows[(rows["temperature"] == tau) & (rows["rank"] == 3)].sort_values("d_k")
        assert set(drawn["scaling"]) == {f"÷ τ = {tau:g}"}
        np.testing.assert_array_equal(drawn["entropy"], expected["entropy"])
        np.testing.assert_array_equal(drawn["max_weight"], expected["max_weight"])
    spec = json.loads(chart.proto.spec)
    [tau_param] = [p for p in spec["params"] if p["name"] == "temperature"]
    assert tau_param["bind"] | {"name": "τ"} == {"input": "range", "min": 0.05, "max": 20.0, "step": 0.05, "name": "τ"}
    assert "temperature" not in [slider.key for slider in page.slider], "τ is moved on the chart, not beside it"


def test_a_move_of_tau_on_the_chart_brings_the_url_the_trained_heads_and_the_words_along(bundled):
    page = run_lab(layer="2")
    pick_on_chart(page, "chart-random-softmax", temperature=4.5)
    assert_healthy(page)
    assert page.query_params["temperature"] == "4.5"
    trained = chart_data(page, "trained")
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=2))
    expected = head_softmax_statistics(trace["Q split"][0], trace["K split"][0], ("temperature",), 4.5)["temperature"]
    np.testing.assert_allclose(trained[trained["scaling"] == "÷ τ = 4.5"].sort_values("head")["entropy"],
                               expected["entropy"], rtol=1e-5)
    scores = random_softmax_statistics([2**p for p in range(10)], 7, ("temperature",), temperature=4.5,
                                       rows=1_024)["temperature"]["entropy"]
    said = "\n".join(m.value for m in page.markdown)
    assert "A fixed τ = 4.5 does not grow with d_k" in said
    assert f"still falls from {scores[0]:.2f} to {scores[-1]:.2f}" in said
    assert "τ: pick it on the chart" in "\n".join(c.value for c in page.caption)


def test_a_link_with_a_tau_off_the_grid_draws_that_tau():
    page = run_lab(temperature="3.33")
    assert_healthy(page)
    table = chart_data(page, "random")
    assert set(table["temperature"].dropna()) == {3.33}
    assert "÷ τ = 3.33" in set(table["scaling"])
