"""The mask as a knob and as a stage of the one-head view, through AppTest: links that set it, the what-if it is
on a model trained otherwise, the masked scores drawn grey where they are −∞, the CSV that follows the mask shown,
and the sink tokens hidden, on the bundled BERT and on a tiny GPT-2 offered as a local folder."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from attention.dissect.trace import build_trace
from attention.models.loading import BUNDLED_MODEL
from attention.stages.settings import ModelShape, TraceSettings
from attention.text.encoding import encode
from components.caches.layers import settings_for
from components.caches.offered import MODEL_DIRS_ENV
from components.charts.masked import MASKED_COLOUR
from components.page.page_state import PageState, from_query
from tests import rendered
from tests.pages import (
    TEXT,
    assert_healthy,
    chart_cell_labels,
    chart_matrix,
    chart_title,
    charts,
    open_keeping_downloads,
    open_page,
    spec_parts,
    warnings,
)


def captions(page: AppTest) -> str:
    return "\n".join(caption.value for caption in page.caption)


def test_a_causal_link_sets_the_mask_and_is_labelled_a_what_if_on_bert():
    page = open_page(mask="causal")
    assert_healthy(page)
    assert page.segmented_control(key="mask").value == "causal"
    assert "What-if: this model was trained with no mask but its padding" in captions(page)
    assert page.query_params["mask"] == "causal", "kept in the link"


def test_the_models_own_mask_is_no_what_if_and_leaves_the_link_alone():
    page = open_page()
    assert_healthy(page)
    assert page.segmented_control(key="mask").value == "model"
    assert "What-if" not in captions(page)
    assert "mask" not in page.query_params and "window" not in page.query_params


def test_a_window_link_draws_the_window_slider_at_its_size():
    page = open_page({"mask": "window", "window": "2"})
    assert_healthy(page)
    assert page.slider(key="window").value == 2
    assert "a window of 2 tokens back" in captions(page)
    page.segmented_control(key="mask").set_value("causal").run()
    assert "window" not in [slider.key for slider in page.slider], "the window's size for the window mask only"


def test_a_bad_mask_or_window_falls_back_with_a_notice():
    page = open_page({"mask": "sideways", "window": "99"})
    assert_healthy(page)
    said = warnings(page)
    assert "mask=`sideways` was ignored" in said and "Showing mask='model'" in said
    assert "window=`99` was ignored" in said and "Showing window=4" in said
    assert page.segmented_control(key="mask").value == "model"


def test_the_windows_size_reaches_the_core_only_under_the_window_mask():
    assert settings_for(PageState(mask="window", window=2)).window == 2
    assert settings_for(PageState(mask="causal", window=2)) == settings_for(PageState(mask="causal")), (
        "equal settings, one cache entry")


# ---- The masked scores, a stage of the one-head view, and the CSV that follows the mask shown ----

def masked_stage(**query: str) -> AppTest:
    page = open_page({"layer": "2", "head": "5", **query})
    page.segmented_control(key="head_stage").set_value("Masked scores").run()
    assert_healthy(page)
    return page


def guide(page: AppTest) -> str:
    [text] = [markdown.value for markdown in page.markdown if markdown.value.startswith("**Reading it:**")]
    return text


def csv_of(query: dict[str, str]) -> pd.DataFrame:
    page, made = open_keeping_downloads(query)
    assert_healthy(page)
    [name] = [name for name in made if name.endswith(".csv")]
    return pd.read_csv(io.StringIO(made[name]()), keep_default_na=False)


def as_matrix(table: pd.DataFrame, column: str) -> np.ndarray:
    count = table["query_index"].max() + 1
    return table[column].to_numpy(np.float64).reshape(count, count)  # rows by query, then key, as head_csv writes


def test_a_causal_mask_on_bert_leaves_no_weight_above_the_diagonal_and_rows_summing_to_one():
    weights = as_matrix(csv_of({"mask": "causal", "layer": "1", "head": "3"}), "weight")
    above = np.triu_indices(len(weights), 1)
    assert (weights[above] == 0).all(), "no query looks ahead"
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-6)
    both_ways = as_matrix(csv_of({"layer": "1", "head": "3"}), "weight")
    assert (both_ways[above] > 0).all(), "without the what-if, BERT looks both ways"


def test_the_csv_writes_the_masked_scores_softmax_reads_with_minus_infinity_where_masked():
    table = csv_of({"mask": "window", "window": "2", "layer": "1", "head": "3"})
    masked, scaled = as_matrix(table, "masked_score"), as_matrix(table, "score")
    query, key = np.indices(masked.shape)
    hidden = (key > query) | (query - key > 2)  # after the query, or more than 2 back
    assert np.isneginf(masked[hidden]).all()
    np.testing.assert_array_equal(masked[~hidden], scaled[~hidden])
    assert (as_matrix(table, "weight")[hidden] == 0).all()


def test_the_masked_stage_sends_masked_cells_as_no_number_and_colours_the_rest_over_them_alone(bundled):
    page = masked_stage(mask="causal")
    [chart] = charts(page)
    assert chart_title(chart) == "Masked scores = scaled + M (−∞ at padding and keys after the query)"
    shown = chart_matrix(chart, fill=0.0)
    above = np.triu(np.ones(shown.shape, dtype=bool), 1)
    assert np.isnan(shown[above]).all(), "the −∞ cells reach the browser as no number"
    masked = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=2, head=5, mask="causal"))["masked"][0]
    np.testing.assert_allclose(shown[~above], masked[~above], rtol=1e-5, atol=1e-6)
    ranges = [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets
              if d.name.endswith("ranges")][0]
    picked = ranges[(ranges["layer"] == 2) & (ranges["head"] == 5)]["value"].to_numpy()
    largest = np.abs(masked[~above]).max()
    np.testing.assert_allclose(picked, [-largest, largest], rtol=1e-6, err_msg="the finite cells' range alone")
    assert "drawn grey" in guide(page) and "the keys after the query" in guide(page)


def test_masked_cells_are_drawn_grey_and_named_masked_on_hover():
    [chart] = charts(masked_stage(mask="causal"))
    drawn = rendered.svg(chart)
    count = len(TEXT.split()) + 2  # [CLS] … [SEP]
    assert drawn.count(f'fill="{MASKED_COLOUR}"') == count * (count - 1) // 2, "every cell above the diagonal"
    tooltips = [part["value"]["expr"] for part in spec_parts(json.loads(chart.proto.spec))
                if isinstance(part.get("value"), dict) and "masked" in str(part["value"].get("expr", ""))]
    assert tooltips, "a masked cell's tooltip says it is masked"


def test_bert_s_own_mask_hides_nothing_in_one_text():
    page = masked_stage()
    assert not np.isnan(chart_matrix(charts(page)[0], fill=0.0)).any()
    assert "What-if" not in captions(page)


# ---- A GPT-2: its own mask is the causal one, its sink the first token ----

@pytest.fixture
def gpt2(tiny_gpt2_checkpoint, monkeypatch) -> str:
    """The tiny GPT-2's folder, offered by the page."""
    monkeypatch.setenv(MODEL_DIRS_ENV, str(tiny_gpt2_checkpoint))
    return str(tiny_gpt2_checkpoint)


def test_gpt2_opens_with_its_own_causal_mask_labelled_as_its_own(gpt2):
    page = open_page(model=gpt2)
    assert_healthy(page)
    mask = page.segmented_control(key="mask")
    assert mask.value == "model" and "model's own (causal)" in mask.options
    assert "What-if" not in captions(page)
    page.segmented_control(key="head_stage").set_value("Masked scores").run()
    shown = chart_matrix(charts(page)[0], fill=0.0)
    assert np.isnan(shown[np.triu_indices(len(shown), 1)]).all() and not np.isnan(np.tril(shown)).any()
    page.segmented_control(key="mask").set_value("none").run()
    assert "What-if: this model was trained with the causal mask" in captions(page)


def test_hiding_gpt2_s_sink_drops_its_first_token_and_renormalises(gpt2, tiny_gpt2_model):
    page = open_page({"model": gpt2, "hide_special": "1"})
    assert_healthy(page)
    [chart] = charts(page)
    rows, keys = chart_cell_labels(chart)
    tokens = list(encode(tiny_gpt2_model, TEXT).tokens[0])
    assert rows == keys == tokens[1:], "the first token hidden, and only it"
    assert chart_title(chart) == "Attention weights (renormalised without the first token)"
    assert "Sinks hidden (the first token: tokens where heads park the attention" in captions(page)
    shown = chart_matrix(chart)
    np.testing.assert_allclose(shown.sum(axis=1), 1.0, atol=1e-5)
    assert (shown[np.triu_indices(len(shown), 1)] == 0).all(), "still causal"


def test_a_window_a_link_may_give_is_one_the_core_takes():
    accepted = []
    for raw in ("0", "1", "4", "32", "33", "2.5", "-1"):
        state, notices = from_query({"mask": ["window"], "window": [raw]}, [BUNDLED_MODEL])
        if not notices:
            settings_for(state).validate(ModelShape(num_layers=6, num_heads=12, hidden_size=384))
            accepted.append(raw)
    assert accepted == ["1", "4", "32"]
