"""What a head moves on the page, through AppTest: the one-head view's Moves stage and its ‖f(x_j)‖ bars, the
"Weight by value norm" toggle (with the sinks hidden too), and the CSV's alpha_fx_norm, against transformers' own
modules (tests/core/test_value_norms.py's references), for BERT and GPT-2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from attention.dissect.heads import head_stage, head_value_norms
from attention.dissect.trace import layer_attention, projections_for
from attention.dissect.value_norms import weighted_by_value_norm
from attention.stages.settings import TraceSettings
from attention.text import segments
from attention.text.encoding import encode
from tests import rendered
from tests.charts.test_scrub import datasets, matrix_of
from tests.core.test_value_norms import bert_reference, gpt2_reference
from tests.page.test_mask_page import as_matrix, csv_of
from tests.page.test_view_head import guide
from tests.pages import (
    TEXT,
    assert_healthy,
    chart_labels,
    chart_matrix,
    chart_picks,
    chart_title,
    chart_values,
    charts,
    open_page,
    pick_on_chart,
    title_text,
)


def test_the_csv_says_what_each_key_moves_as_transformers_computes_it_for_bert(bundled):
    table = csv_of({"layer": "3", "head": "5"})
    np.testing.assert_allclose(as_matrix(table, "alpha_fx_norm"), bert_reference(bundled, TEXT, 3)[5],
                               rtol=1e-4, atol=1e-5)


def test_the_csv_says_what_each_key_moves_as_transformers_computes_it_for_gpt2(tiny_gpt2_checkpoint,
                                                                              tiny_gpt2_model, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    text = "what if it rains tomorrow, then."
    table = csv_of({"model": str(tiny_gpt2_checkpoint), "text": text, "layer": "1", "head": "2"})
    np.testing.assert_allclose(as_matrix(table, "alpha_fx_norm"), gpt2_reference(tiny_gpt2_model, text, 1)[2],
                               rtol=1e-4, atol=1e-5)


def moved_reference(bundled, layer: int) -> np.ndarray:
    """(nh, T, T) what every head of a layer moves, for the page's default text, from transformers alone."""
    return bert_reference(bundled, TEXT, layer)


def weighted_reference(bundled, layer: int, head: int, hide_special: bool = False) -> np.ndarray:
    """(R, K) one head's weights weighted by value norm, rows renormalised, then (hide_special) the sinks dropped
    and the rows renormalised again: value weighting first, the page's own filter after it."""
    settings = TraceSettings(layer=layer)
    encoding = encode(bundled, TEXT)
    computed = layer_attention(bundled, encoding, settings)
    norms = head_value_norms(computed, [head], projections_for(bundled, settings).output)[0]  # (1, T)
    weighted = weighted_by_value_norm(computed.weights[0, [head]], norms)[0]  # (T, T)
    rows, keys = segments.visible_tokens(encoding.token_type_ids[0], encoding.sinks[0], "all", hide_special)
    return segments.visible_weights(weighted, rows, keys, hide_special)


def on_moves(**query: str) -> AppTest:
    page = open_page({"layer": "2", "head": "5", **query})
    page.segmented_control(key="head_stage").set_value("What moves α·‖f(x)‖").run()
    assert_healthy(page)
    return page


def test_the_moves_stage_holds_what_every_head_moves_and_each_is_transformers(bundled):
    page = on_moves()
    [chart] = charts(page)  # the bars are drawn in the heatmap's own chart, under it: picked by the same inputs
    [heatmap, bars] = json.loads(chart.proto.spec)["vconcat"]
    assert title_text(heatmap["title"], chart_labels(chart)) == "What moves α·‖f(x)‖"
    cells = datasets(chart)["p0-cells"]
    for layer, head in ((0, 0), (2, 5), (5, 11)):
        np.testing.assert_allclose(matrix_of(cells, layer * 12 + head), moved_reference(bundled, layer)[head],
                                   rtol=1e-4, atol=1e-5)
    assert "‖f(x_j)‖ of each key, layer 2, head 5" in rendered.svg(chart), "Vega titles the bars from the picks"
    assert chart_picks(chart) == {"layer": 2, "head": 5}, "the title's layer and head start at the page's"
    weights = layer_attention(bundled, encode(bundled, TEXT), TraceSettings(layer=2)).weights[0, 5]  # (T, T)
    strip = datasets(chart)["strip"]
    assert len(strip) == 6 * 12 * weights.shape[1], "every head's bars, sent once"
    norms = bars_of(chart, 2, 5)
    np.testing.assert_allclose(weights * norms[None, :], moved_reference(bundled, 2)[5], rtol=1e-4, atol=1e-5)


def bars_of(chart, layer: int, head: int) -> np.ndarray:
    """(K,) the ‖f(x_j)‖ bars of one head, from the Moves chart's strip of every head sent."""
    strip = datasets(chart)["strip"]
    return strip[(strip["layer"] == layer) & (strip["head"] == head)].sort_values("key")["norm"].to_numpy()


def test_the_moves_guide_says_rows_do_not_sum_to_one_and_names_kobayashi():
    text = guide(on_moves())
    assert "Rows do not sum to 1" in text and "Kobayashi et al. (2020)" in text and "‖f(x_j)‖" in text
    assert "spreads its attention" not in text


def test_the_moves_bars_follow_a_head_picked_on_the_chart():
    page = on_moves()
    [before] = charts(page)
    page = pick_on_chart(page, "chart-moved", layer=4, head=1)
    assert_healthy(page)
    [chart] = charts(page)
    assert chart_picks(chart) == {"layer": 4, "head": 1}, "the bars are filtered by the chart's own inputs"
    assert chart.proto.spec == before.proto.spec, "the rerun leaves the chart, bars and all, as the browser drew it"
    assert [d.data.data for d in chart.proto.datasets] == [d.data.data for d in before.proto.datasets]
    assert not np.allclose(bars_of(chart, 4, 1), bars_of(chart, 2, 5))


@pytest.mark.parametrize("hide_special", [False, True])
def test_weight_by_value_norm_draws_the_weights_times_their_value_norm_rows_renormalised(bundled, hide_special):
    page = open_page({"layer": "2", "head": "5", "value_norm": "1", **({"hide_special": "1"} if hide_special else {})})
    assert_healthy(page)
    assert page.toggle(key="value_norm").value
    [chart] = charts(page)
    assert "× ‖f(x)‖, rows renormalised" in chart_title(chart)
    shown = chart_matrix(chart)
    np.testing.assert_allclose(shown, weighted_reference(bundled, 2, 5, hide_special), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(shown.sum(axis=1), 1.0, rtol=1e-5)
    assert "Weighted by value norm" in guide(page)


def test_the_value_norm_toggle_changes_the_weights_the_title_and_the_link_and_keeps_the_spec():
    """Its title is data (heatmap.DataTitle): the browser swaps the new weights and title in, and builds nothing."""
    page = open_page({"layer": "3", "head": "0"})
    [chart] = charts(page)
    before, spec = chart_matrix(chart), chart.proto.spec
    page.toggle(key="value_norm").set_value(True).run()
    assert_healthy(page)
    [chart] = charts(page)
    after = chart_matrix(chart)
    assert before[:, 0].mean() > 3 * after[:, 0].mean(), "[CLS] takes much weight and moves little"
    assert page.query_params["value_norm"] == "1"
    assert chart.proto.spec == spec
    assert chart_title(chart) == "Attention weights × ‖f(x)‖, rows renormalised"


def park_values(page: AppTest) -> pd.DataFrame:
    """The rows of the "Where attention parks" chart: measure, layer, place, share."""
    [shares] = [values for values in map(chart_values, charts(page)) if "place" in values]
    return shares


def test_the_all_heads_view_weights_its_maps_by_value_norm_and_says_so(bundled):
    page = open_page({"view": "heads", "layer": "3", "value_norm": "1"})
    assert_healthy(page)
    assert page.toggle(key="value_norm").value
    assert [h.value for h in page.subheader][0] == "Every head of layer 3, weighted by value norm"
    assert any("Weighted by value norm" in caption.value for caption in page.caption)
    plain = open_page({"view": "heads", "layer": "3"})
    grid, weighted = charts(plain)[0], charts(page)[0]
    assert datasets(grid).keys() == datasets(weighted).keys()
    assert any(not datasets(grid)[name].equals(datasets(weighted)[name]) for name in datasets(grid))


def test_where_attention_parks_says_what_this_model_does_from_its_numbers(bundled):
    page = open_page({"view": "heads"})
    assert_healthy(page)
    shares = park_values(page)
    assert set(shares["place"]) == {"[CLS]", "[SEP]", "“.” and “,”"}
    assert set(shares["layer"]) == set(range(6))
    by = shares.pivot_table(index=["layer", "place"], columns="measure", values="share")
    cls = by.xs("[CLS]", level="place")
    layer = int(cls["by weight α"].idxmax())
    [caption] = [c.value for c in page.caption if c.value.startswith("A sink is a token")]
    assert "Clark et al. (2019)" in caption and "Kobayashi et al. (2020)" in caption
    assert (f"layer {layer} puts {cls['by weight α'][layer]:.0%} of its weight on [CLS] but "
            f"{cls['by what moves α·‖f(x)‖'][layer]:.0%} of what moves") in caption
    assert cls["by what moves α·‖f(x)‖"][layer] < cls["by weight α"][layer] / 4


def test_where_gpt2s_attention_parks_is_its_first_token_and_punctuation(tiny_gpt2_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    page = open_page({"model": str(tiny_gpt2_checkpoint), "text": "what if it rains, then.", "view": "heads"})
    assert_healthy(page)
    assert set(park_values(page)["place"]) == {"the first token", "“.” and “,”"}
    assert any("this model's are the first token" in c.value for c in page.caption)


def test_the_moves_stage_draws_on_gpt2(tiny_gpt2_checkpoint, tiny_gpt2_model, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    text = "what if it rains, then."
    page = open_page({"model": str(tiny_gpt2_checkpoint), "text": text, "layer": "1", "head": "2"})
    page.segmented_control(key="head_stage").set_value("What moves α·‖f(x)‖").run()
    assert_healthy(page)
    np.testing.assert_allclose(chart_matrix(charts(page)[0]), gpt2_reference(tiny_gpt2_model, text, 1)[2],
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("source", ["identity", "random"])
def test_what_moves_follows_the_projection_source(bundled, source):
    """The identity source has no W_O (what moves is α·‖x_j‖); the random one moves through its own W_O."""
    page = on_moves(source=source, head="0", **({"head_dim": "48"} if source == "random" else {}))
    settings = TraceSettings(layer=2, source=source, **({"head_dim": 48} if source == "random" else {}))
    computed = layer_attention(bundled, encode(bundled, TEXT), settings)
    expected = head_stage(computed, "moved", [0], output=projections_for(bundled, settings).output)[0, 0]
    np.testing.assert_allclose(chart_matrix(charts(page)[0]), expected, rtol=1e-4, atol=1e-5)
    page.segmented_control(key="head_stage").set_value("Attention weights").run()
    page.toggle(key="value_norm").set_value(True).run()
    assert_healthy(page)


def test_the_moves_stage_stands_in_presentation_mode():
    page = on_moves(present="1")
    [chart] = charts(page)
    assert json.loads(chart.proto.spec)["vconcat"][1]["title"]["text"]["expr"].startswith("'‖f(x_j)‖ of each key")
    assert len(bars_of(chart, 2, 5)) > 0
