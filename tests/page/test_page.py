"""The page driven through Streamlit's AppTest: every control, every preset, bad links, the CSV."""

from __future__ import annotations

import html
import io
import re

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from attention.dissect.parity import transformers_weights
from attention.dissect.trace import build_trace
from attention.models.model_list import BUNDLED_MODEL
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.page.text_boxes import PRESETS
from tests import pages
from tests.pages import (
    APP,
    chart_inputs,
    chart_matrix,
    chart_picks,
    chart_title,
    chart_values,
    charts,
    pick_on_chart,
    warnings,
)


def run_page(query: dict[str, str] | None = None) -> AppTest:
    return pages.open_page(query)


def assert_healthy(page: AppTest) -> None:
    pages.assert_healthy(page)
    assert len(charts(page)) == 1, "one chart: the chosen stage's (the weights at first)"


def weights_on_screen(page: AppTest) -> np.ndarray:
    return chart_matrix(charts(page)[0])


def shapes(page: AppTest) -> dict[str, str]:
    """The shapes panel as {step: shape}, e.g. {"Q": "(1, 7, 32)"}, read from the HTML it sends."""
    panels = [element.proto.body for element in page.get("html") if 'data-testid="shapes-panel"' in element.proto.body]
    assert len(panels) == 1, "one shapes panel"
    return {html.unescape(name): html.unescape(shape)
            for name, shape in re.findall(r"<li><code>(.*?)</code> <code>(.*?)</code>", panels[0])}


def test_default_page_draws_one_head_of_the_bundled_model(bundled):
    page = run_page()
    assert_healthy(page)
    assert not page.warning
    model_line = "all-MiniLM-L6-v2: 6 layers × 12 heads, hidden size 384, a BERT (an encoder: every token looks both"
    assert model_line in page.caption[0].value
    encoding = encode(bundled, "time flies like an arrow")
    expected = build_trace(bundled, encoding, TraceSettings(layer=0, head=0))["weights"][0]
    np.testing.assert_allclose(weights_on_screen(page), expected, atol=1e-6)
    assert shapes(page)["Q"] == "(1, 7, 32)"
    assert shapes(page)["concat"] == "(1, 7, 384)"
    proof = page.metric[0].value
    assert float(proof) <= 1e-5


def test_the_proof_is_this_heads_largest_difference_from_transformers(bundled):
    page = run_page({"layer": "2", "head": "7", "scaling": "linear"})  # the proof always uses √d_k
    encoding = encode(bundled, "time flies like an arrow")
    ours = build_trace(bundled, encoding, TraceSettings(layer=2, head=7))["weights"][0]
    theirs = transformers_weights(bundled, encoding, 2)[0, 7]
    shown = float(page.metric[0].value)  # printed with two significant digits
    assert shown == pytest.approx(float(np.abs(ours - theirs).max()), rel=0.06)


def test_the_charts_own_layer_and_head_move_the_heatmap_the_shapes_and_the_url(bundled):
    page = run_page()
    before = weights_on_screen(page)
    spec = charts(page)[0].proto.spec
    pick_on_chart(page, "chart-weights", head=5)
    assert_healthy(page)
    assert page.query_params["head"] == "5"
    assert page.subheader[0].value == "Layer 0, head 5"
    assert not np.allclose(before, weights_on_screen(page))
    assert charts(page)[0].proto.spec == spec, "the chart moved in the browser: its spec stays as it was"
    pick_on_chart(page, "chart-weights", layer=3, head=5)
    assert page.query_params["layer"] == "3"
    encoding = encode(bundled, "time flies like an arrow")
    expected = build_trace(bundled, encoding, TraceSettings(layer=3, head=5))["weights"][0]
    np.testing.assert_allclose(weights_on_screen(page), expected, atol=1e-6)


@pytest.mark.parametrize("scaling", ["none", "sqrt", "linear", "temperature"])
def test_every_scaling_choice(scaling, bundled):
    page = run_page({"head": "2"})
    page.segmented_control(key="scaling").set_value(scaling).run()
    if scaling == "temperature":
        page.slider(key="temperature").set_value(4.0).run()
        assert page.query_params["temperature"] == "4"
    assert_healthy(page)
    settings = TraceSettings(head=2, scaling=scaling, temperature=4.0 if scaling == "temperature" else 1.0)
    expected = build_trace(bundled, encode(bundled, "time flies like an arrow"), settings)["weights"][0]
    np.testing.assert_allclose(weights_on_screen(page), expected, atol=1e-6)
    assert "scaling" not in page.query_params if scaling == "sqrt" else page.query_params["scaling"] == scaling


def test_random_source_with_head_dim_and_seed():
    page = run_page()
    page.segmented_control(key="source").set_value("random").run()
    page.slider(key="head_dim").set_value(48).run()
    assert_healthy(page)
    assert shapes(page)["Q"] == "(1, 7, 48)"
    assert shapes(page)["Q split"] == "(1, 8, 7, 48)"
    assert chart_inputs(charts(page)[0])["head"] == (0, 7), "384 // 48 heads"
    first = weights_on_screen(page)
    page.number_input(key="seed").set_value(7).run()
    assert page.query_params["seed"] == "7"
    assert not np.allclose(first, weights_on_screen(page)), "another seed, other projections"
    assert "proof compares against transformers' trained heads" in "\n".join(i.value for i in page.info)


def test_identity_source_has_one_head_of_size_c():
    page = run_page({"head": "4"})
    page.segmented_control(key="source").set_value("identity").run()
    assert_healthy(page)
    assert shapes(page)["Q"] == "(1, 7, 384)"
    assert "head=4 does not exist" in warnings(page)
    assert "head" not in [s.key for s in page.slider]


def test_bert_head_dim_is_fixed_and_says_why():
    page = run_page()
    captions = "\n".join(c.value for c in page.caption)
    assert "head_dim (d) = 32: the trained weights fix it: 384 / 12 heads" in captions


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_fills_the_texts(preset):
    page = run_page()
    page.selectbox(key="preset").set_value(preset).run()
    assert_healthy(page)
    text, text_b = PRESETS[preset]
    assert page.text_area(key="text").value == text
    assert page.text_input(key="text_b").value == text_b
    assert page.query_params.get("text_b", "") == text_b


def test_sentence_pair_marks_segments(bundled):
    page = run_page()
    page.text_input(key="text_b").input("fruit flies like a banana").run()
    assert_healthy(page)
    encoding = encode(bundled, "time flies like an arrow", "fruit flies like a banana")
    assert encoding.token_type_ids[0].tolist() == [0] * 7 + [1] * 6
    assert shapes(page)["input_ids"] == f"(1, {encoding.num_tokens})"


def test_new_text_runs_the_model_and_redraws(bundled):
    page = run_page()
    page.text_area(key="text").input("I am looking for a hot job").run()
    assert_healthy(page)
    assert page.query_params["text"] == "I am looking for a hot job"
    assert shapes(page)["input_ids"] == "(1, 9)"


def test_the_text_help_holds_for_any_model():
    page = run_page()
    assert "BERT" not in page.text_area(key="text").help and "512" not in page.text_area(key="text").help, (
        "the limit is the model's own: 512 tokens for BERT, 1,024 for GPT-2")


def test_model_selector_loads_a_local_checkpoint(tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_checkpoint))
    page = run_page()
    page.selectbox(key="model").set_value(str(tiny_checkpoint)).run()
    assert_healthy(page)
    assert "2 layers × 4 heads, hidden size 32" in page.caption[0].value
    assert page.query_params["model"] == str(tiny_checkpoint)


def test_a_deployer_sets_the_model_a_plain_link_opens(tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_checkpoint))
    monkeypatch.setenv("ATTENTION_ANATOMY_DEFAULT_MODEL", str(tiny_checkpoint))
    page = run_page()
    assert_healthy(page)
    assert "2 layers × 4 heads, hidden size 32" in page.caption[0].value
    assert "model" not in page.query_params  # the default needs no parameter
    page.selectbox(key="model").set_value("all-MiniLM-L6-v2").run()
    assert "6 layers × 12 heads" in page.caption[0].value
    assert page.query_params["model"] == "all-MiniLM-L6-v2"  # not the default here, so the link says it


def test_a_default_model_the_page_does_not_offer_gives_way_to_the_bundled_one(monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_DEFAULT_MODEL", "someone/not-allowed")
    page = run_page()
    assert not page.exception
    assert "6 layers × 12 heads" in page.caption[0].value
    assert "default model `someone/not-allowed` (ATTENTION_ANATOMY_DEFAULT_MODEL) is not one it offers" in \
        warnings(page)


def test_hub_model_that_cannot_be_fetched_falls_back_to_the_bundled_one():
    page = run_page()
    page.selectbox(key="model").set_value("bert-base-uncased").run()
    assert_healthy(page)
    assert "could not be loaded" in warnings(page)
    assert "Showing the bundled model instead" in warnings(page)
    assert page.selectbox(key="model").value == BUNDLED_MODEL


def test_a_link_reopens_the_same_view():
    query = {"text": "fruit flies like a banana", "layer": "2", "head": "5", "scaling": "linear"}
    page = run_page(query)
    assert_healthy(page)
    assert not page.warning
    assert page.text_area(key="text").value == "fruit flies like a banana"
    assert chart_picks(charts(page)[0]) == {"layer": 2, "head": 5}
    assert page.segmented_control(key="scaling").value == "linear"
    assert {k: page.query_params[k] for k in query} == query
    assert page.subheader[0].value == "Layer 2, head 5"


@pytest.mark.parametrize(("query", "says", "shown"), [
    ({"layer": "abc"}, "layer=`abc` was ignored: it is not a whole number", ("layer", 0)),
    ({"head": "-1"}, "head=`-1` was ignored: it must be from 0", ("head", 0)),
    ({"layer": "99"}, "layer=99 does not exist (the model has 6 layers: 0 to 5)", ("layer", 5)),
    ({"source": "random", "head_dim": "100000"}, "head_dim=100000 does not exist", ("head_dim", 384)),
    ({"scaling": "foo"}, "scaling=`foo` was ignored: it must be one of none, sqrt, linear, temperature", None),
    ({"model": "../../etc/passwd"}, "model=`../../etc/passwd` was ignored: not one of the models", None),
    ({"scaling": "temperature", "temperature": "0"}, "τ must be a number from 0.05 to 20", ("temperature", 1.0)),
    ({"source": "random", "seed": "-3"}, "seed=`-3` was ignored", None),
    ({"text": "x" * 10_001}, "text=`xxxxx", None),
])
def test_bad_link_parameters_fall_back_with_a_notice(query, says, shown):
    page = run_page(query)
    assert_healthy(page)
    assert says in warnings(page)
    if shown:
        key, value = shown
        on_chart = chart_picks(charts(page)[0])
        assert (on_chart[key] if key in on_chart else page.slider(key=key).value) == value


def test_repeated_parameter_uses_the_last_one():
    page = AppTest.from_file(APP, default_timeout=120)
    page.query_params["head"] = ["1", "3"]
    page.run()
    assert_healthy(page)
    assert chart_picks(charts(page)[0])["head"] == 3
    assert "gives head 2 times; the last one is used" in warnings(page)


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_blank_text_asks_for_a_sentence(text):
    page = run_page()
    page.text_area(key="text").input(text).run()
    assert not page.exception
    assert "Type a sentence" in page.info[0].value


def test_text_beyond_512_tokens_is_cut_with_a_notice():
    page = run_page({"text": "word " * 600})
    assert_healthy(page)
    assert "the last 90 tokens were dropped" in warnings(page)


def run_keeping_downloads(query: dict[str, str], stage: str | None = None) -> tuple[AppTest, dict]:
    return pages.open_keeping_downloads(query, **({"head_stage": stage} if stage else {}))


def test_csv_download_holds_the_current_head(bundled):
    page, made = run_keeping_downloads({"layer": "1", "head": "3", "scaling": "linear"})
    assert_healthy(page)
    assert "Download CSV" in [button.proto.label for button in page.get("download_button")]
    table = pd.read_csv(io.StringIO(made["attention-layer-1-head-3.csv"]()), keep_default_na=False)
    assert list(table.columns) == ["query_index", "query_token", "key_index", "key_token", "score", "masked_score",
                                   "weight", "alpha_fx_norm"]
    trace = build_trace(bundled, encode(bundled, "time flies like an arrow"),
                        TraceSettings(layer=1, head=3, scaling="linear"))
    tokens = trace.tokens[0]
    assert len(table) == len(tokens) ** 2
    assert table["query_token"].tolist() == [t for t in tokens for _ in tokens]
    assert table["key_token"].tolist() == list(tokens) * len(tokens)
    np.testing.assert_allclose(table["score"].to_numpy(np.float32), trace["scaled"][0].ravel(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(table["masked_score"], table["score"], "BERT's own mask hides padding only")
    np.testing.assert_allclose(table["weight"].to_numpy(np.float32), trace["weights"][0].ravel(), rtol=1e-5, atol=1e-6)


def test_every_chart_downloads_as_png_and_svg():
    made = {}
    for stage in ("Attention weights", "Raw scores Q·Kᵀ", "Scaled scores", "Masked scores", "Context vectors",
                  "What moves α·‖f(x)‖"):
        page, files = run_keeping_downloads({"head": "2", "mask": "causal"}, stage=stage)
        made.update(files)
    for chart in ("weights", "scores", "scaled", "masked", "context", "moved"):
        assert made[f"{chart}-layer-0-head-2.png"]().startswith(b"\x89PNG\r\n")
        svg = made[f"{chart}-layer-0-head-2.svg"]()
        assert svg.lstrip().startswith("<svg") and "[CLS]" in svg and "layer 0 head 2" in svg


def test_only_the_chosen_stage_is_drawn(bundled):
    page = run_page({"head": "2"})
    assert [chart_title(chart) for chart in charts(page)] == ["Attention weights"]
    page.session_state["head_stage"] = "Context vectors"
    page.run()
    assert_healthy(page)
    assert [chart_title(chart) for chart in charts(page)] == ["Context = weights · V"]
    context = build_trace(bundled, encode(bundled, "time flies like an arrow"), TraceSettings(head=2))["context"][0]
    np.testing.assert_allclose(chart_matrix(charts(page)[0]), context, atol=1e-6)



@pytest.mark.parametrize(("pair", "rows", "keys"), [
    ("a_to_b", 7, 6), ("b_to_a", 6, 7), ("within_a", 7, 7), ("within_b", 6, 6), ("all", 13, 13),
])
def test_sentence_pair_filters_show_one_block(pair, rows, keys, bundled):
    page = run_page({"text_b": "fruit flies like a banana", "head": "8"})
    page.segmented_control(key="pair").set_value(pair).run()
    assert_healthy(page)
    cells = chart_values(charts(page)[0])
    assert (cells["row"].nunique(), cells["column"].nunique()) == (rows, keys)
    full = build_trace(bundled, encode(bundled, "time flies like an arrow", "fruit flies like a banana"),
                       TraceSettings(head=8))["weights"][0]
    first_row = 0 if pair in ("all", "a_to_b", "within_a") else 7
    first_key = 0 if pair in ("all", "b_to_a", "within_a") else 7
    assert cells["value"].iloc[0] == pytest.approx(full[first_row, first_key], abs=1e-6)
    assert page.query_params.get("pair", "all") == pair


def test_hiding_special_tokens_renormalises_the_rest(bundled):
    page = run_page({"head": "3"})
    page.toggle(key="hide_special").set_value(True).run()
    assert_healthy(page)
    assert page.query_params["hide_special"] == "1"
    assert "renormalised without [CLS] and [SEP]" in chart_title(charts(page)[0])
    shown = weights_on_screen(page)
    assert shown.shape == (5, 5), "time flies like an arrow, without [CLS] and [SEP]"
    np.testing.assert_allclose(shown.sum(axis=1), 1.0, atol=1e-5)
    full = build_trace(bundled, encode(bundled, "time flies like an arrow"), TraceSettings(head=3))["weights"][0]
    inner = full[1:6, 1:6]
    np.testing.assert_allclose(shown, inner / inner.sum(axis=1, keepdims=True), atol=1e-6)
