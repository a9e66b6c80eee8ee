"""Two texts side by side through AppTest: each heatmap is its own text's trace, the difference is a − b."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from attention.analyses.compare import aligned_difference, aligned_positions
from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.page import viewport
from components.views.compare import BY_QUERY_DATA, by_query_drawn
from tests import pages
from tests.pages import (
    APP,
    assert_healthy,
    chart_inputs,
    chart_labels,
    chart_matrix,
    chart_title,
    chart_values,
    open_page,
    pick_on_chart,
    spec_parts,
)

TEXT_A, TEXT_B = "time flies like an arrow", "fruit flies like a banana"


def run_compare(**query: str) -> AppTest:
    return open_page({"view": "compare", **query})


PANELS = {"Text A": "p0", "Text B": "p1", "A − B": "p2"}  # the chart's panels, in order


def heatmaps(page: AppTest) -> dict[str, np.ndarray]:
    """The matrices the page's one chart shows, by panel: "Text A", "Text B" and "A − B"."""
    chart = page.get("vega_lite_chart")[0]  # the heatmaps', then each query token's largest change
    drawn = {dataset.name.split("-")[0] for dataset in chart.proto.datasets}
    return {name: chart_matrix(chart, panel=panel) for name, panel in PANELS.items() if panel in drawn}


def weights(bundled, text: str, **settings) -> np.ndarray:
    return build_trace(bundled, encode(bundled, text), TraceSettings(**settings))["weights"][0]


@pytest.fixture(scope="module")
def pair_page() -> AppTest:
    return run_compare(text_b=TEXT_B, layer="1", head="8")


def test_the_view_opens_from_its_link_with_three_heatmaps(pair_page):
    assert_healthy(pair_page)
    assert sorted(heatmaps(pair_page)) == ["A − B", "Text A", "Text B"]
    assert not pair_page.info, "a second text was given: no fallback notice"


def test_each_heatmap_is_its_own_texts_trace_not_the_pair(pair_page, bundled):
    shown = heatmaps(pair_page)
    np.testing.assert_allclose(shown["Text A"], weights(bundled, TEXT_A, layer=1, head=8), atol=1e-6)
    np.testing.assert_allclose(shown["Text B"], weights(bundled, TEXT_B, layer=1, head=8), atol=1e-6)


def test_the_difference_is_a_minus_b_on_the_shared_tokens(pair_page, bundled):
    a, b = weights(bundled, TEXT_A, layer=1, head=8), weights(bundled, TEXT_B, layer=1, head=8)
    shared_a, shared_b = [0, 2, 3, 6], [0, 2, 3, 6]  # [CLS] flies like [SEP]
    expected = a[np.ix_(shared_a, shared_a)] - b[np.ix_(shared_b, shared_b)]
    np.testing.assert_allclose(heatmaps(pair_page)["A − B"], expected, atol=1e-6)
    words = expected[1:3, 1:3]  # flies, like: [CLS] and [SEP] left out
    assert float(pair_page.metric[0].value) == pytest.approx(words.flat[np.abs(words).argmax()], abs=5e-4)


def test_one_pair_of_inputs_moves_both_texts_and_their_difference(pair_page, bundled):
    page = run_compare(text_b=TEXT_B)
    pick_on_chart(page, "chart-compare", layer=3, head=5)
    assert_healthy(page)
    assert (page.query_params["layer"], page.query_params["head"]) == ("3", "5")
    shown = heatmaps(page)
    a, b = weights(bundled, TEXT_A, layer=3, head=5), weights(bundled, TEXT_B, layer=3, head=5)
    np.testing.assert_allclose(shown["Text A"], a, atol=1e-6)
    np.testing.assert_allclose(shown["Text B"], b, atol=1e-6)
    np.testing.assert_allclose(shown["A − B"], aligned_difference(a, b, *aligned_positions(
        list(encode(bundled, TEXT_A).tokens[0]), list(encode(bundled, TEXT_B).tokens[0]))), atol=1e-6)


def test_the_largest_change_follows_a_head_moved_on_the_chart(bundled):
    page = run_compare(text_b=TEXT_B, layer="2", head="1")
    pick_on_chart(page, "chart-compare", head=7)
    assert_healthy(page)
    a, b = weights(bundled, TEXT_A, layer=2, head=7), weights(bundled, TEXT_B, layer=2, head=7)
    positions_a, positions_b = aligned_positions(list(encode(bundled, TEXT_A).tokens[0]),
                                                 list(encode(bundled, TEXT_B).tokens[0]))
    expected = aligned_difference(a, b, positions_a, positions_b)
    words = np.abs(expected)
    words[[0, -1], :] = words[:, [0, -1]] = -1  # [CLS] and [SEP] left out, as queries and as keys
    row, column = np.unravel_index(words.argmax(), expected.shape)
    assert float(page.metric[0].value) == pytest.approx(expected[row, column], abs=5e-4)
    (a_row, a_column), (b_row, b_column) = ((positions[row], positions[column]) for positions in (positions_a,
                                                                                               positions_b))
    assert f"A: {a[a_row, a_column]:.3f} (positions {a_row} → {a_column})" in page.text[0].value
    assert f"B: {b[b_row, b_column]:.3f} (positions {b_row} → {b_column})" in page.text[0].value


def test_without_a_second_text_it_compares_with_the_notebooks_sentence(bundled):
    page = run_compare()
    assert_healthy(page)
    assert "fruit flies like a banana" in page.info[0].value
    np.testing.assert_allclose(heatmaps(page)["Text B"], weights(bundled, TEXT_B), atol=1e-6)


def test_tokens_in_markdown_are_code_spans():
    page = run_compare(text="**bold** <b>x</b>", text_b="plain words")
    assert_healthy(page)
    captions = "\n".join(c.value for c in page.caption)
    assert "`**bold** <b>x</b>`" in captions


def test_both_heatmaps_share_one_colour_scale_and_a_head_move_keeps_the_spec(bundled):
    page = run_compare(text_b=TEXT_B, layer="1", head="8")
    chart = page.get("vega_lite_chart")[0]
    spec = json.loads(chart.proto.spec)
    assert spec["vconcat"][0]["resolve"]["scale"]["color"] == "shared", "text A and text B: one colour scale"
    assert spec["resolve"]["scale"]["color"] == "independent", "the difference has its own, around zero"
    pick_on_chart(page, "chart-compare", head=3)
    assert_healthy(page)
    assert page.get("vega_lite_chart")[0].proto.spec == chart.proto.spec, "the browser moved: the spec stays"
    np.testing.assert_allclose(heatmaps(page)["Text A"], weights(bundled, TEXT_A, layer=1, head=3), atol=1e-6)


@pytest.mark.parametrize(("source", "head_dim", "heads"), [("random", "48", 8), ("identity", "32", 1)])
def test_the_heads_are_those_of_the_source_not_of_the_model(bundled, source, head_dim, heads):
    page = run_compare(text_b=TEXT_B, source=source, head_dim=head_dim, seed="3", layer="4")
    assert_healthy(page)
    chart = page.get("vega_lite_chart")[0]
    assert chart_inputs(chart)["head"] == (0, heads - 1)
    settings = dict(source=source, layer=4, head=0, head_dim=int(head_dim) if source == "random" else None, seed=3)
    np.testing.assert_allclose(heatmaps(page)["Text A"], weights(bundled, TEXT_A, **settings), atol=1e-6)


def difference_labels(page: AppTest) -> list[str]:
    """The tokens the difference panel is drawn over: those the two texts share, as aligned. Its y axis reads
    them from a parameter (token_axes.token_labels), named in its label expression, which reads a dataset."""
    chart = page.get("vega_lite_chart")[0]
    parts = spec_parts(json.loads(chart.proto.spec))
    cells = next(part for part in parts if part.get("data", {}).get("name") == "p2-cells")
    return chart_labels(chart)[cells["encoding"]["y"]["axis"]["labelExpr"].split("[")[0]]


@pytest.mark.parametrize(("text_a", "text_b", "shared"), [
    ("a 😀 b", "a 你 b", ["[CLS]", "a", "b", "[SEP]"]),  # two [UNK]s that stand for different characters
    ("a 😀 b", "c 😀 d", ["[CLS]", "[UNK]", "[SEP]"]),  # the same character: one token in both texts
])
def test_an_unknown_token_aligns_only_with_one_that_stands_for_the_same_characters(text_a, text_b, shared):
    page = run_compare(text=text_a, text_b=text_b)
    assert_healthy(page)
    assert difference_labels(page) == shared


IT_A = "The animal didn't cross the street because it was too tired"  # notebook 004's pair: "it" is the animal
IT_B = "The animal didn't cross the street because it was too wide"  # here "it" is the street


def by_query(page: AppTest) -> pd.DataFrame:
    """The rows of the chart of each query token's largest change."""
    [chart] = [chart for chart in page.get("vega_lite_chart")
               if chart_title(chart) == "Each query token's largest change"]
    return chart_values(chart)


def test_the_largest_change_is_between_words_unless_the_special_tokens_are_counted():
    page = run_compare(text=IT_A, text_b=IT_B, layer="3", head="1")
    assert_healthy(page)
    assert page.text[0].value.startswith("query it → key animal"), "the change the pair was written for"
    assert float(page.metric[0].value) == pytest.approx(0.374, abs=5e-4)
    left_out = "The sinks ([CLS] and [SEP]) are left out"
    assert any(left_out in caption.value for caption in page.caption), "the page says so"

    page.toggle(key="compare_special").set_value(True).run()
    assert_healthy(page)
    assert page.text[0].value.startswith("query too → key [CLS]")
    assert float(page.metric[0].value) == pytest.approx(0.579, abs=5e-4)


def test_each_query_tokens_largest_change_is_a_bar_that_names_its_key(bundled):
    page = run_compare(text=IT_A, text_b=IT_B, layer="3", head="1")
    assert_healthy(page)
    rows = by_query(page)
    a, b = weights(bundled, IT_A, layer=3, head=1), weights(bundled, IT_B, layer=3, head=1)
    positions_a, positions_b = aligned_positions(list(encode(bundled, IT_A).tokens[0]),
                                                 list(encode(bundled, IT_B).tokens[0]))
    difference = aligned_difference(a, b, positions_a, positions_b)[1:-1, 1:-1]  # (K, K) without [CLS], [SEP]
    words = [encode(bundled, IT_A).tokens[0][i] for i in positions_a[1:-1]]
    assert rows["query"].tolist() == words, "every shared word, in order; no [CLS] nor [SEP]"
    columns = np.abs(difference).argmax(axis=1)
    assert rows["key"].tolist() == [words[column] for column in columns]
    np.testing.assert_allclose(rows["change"], difference[np.arange(len(words)), columns], atol=1e-6)
    it = rows[rows["query"] == "it"].iloc[0]
    assert (it["key"], it["to key"]) == ("animal", "→ animal")
    assert it["weight in A"] - it["weight in B"] == pytest.approx(it["change"], abs=1e-6)
    [chart] = [chart for chart in page.get("vega_lite_chart")
               if chart_title(chart) == "Each query token's largest change"]
    tooltip = {field["field"] for part in spec_parts(json.loads(chart.proto.spec))
               for field in part.get("tooltip", []) if isinstance(field, dict)}
    assert {"query", "key", "change", "weight in A", "weight in B"} <= tooltip, "named on hover"


def test_texts_that_share_only_special_tokens_say_so():
    page = run_compare(text="alpha beta", text_b="gamma delta")
    assert_healthy(page)
    assert any("share no token but the sinks ([CLS] and [SEP])" in info.value for info in page.info)


LAPTOP_1280 = {"main": 900, "window": 1280, "height": 720}  # the main block at 1280×720, the sidebar open
LEGIBLE_PLOT_PX = 200  # a text's plot at least: at 150 px, 7 tokens' cells were 21 px and 33 tokens' 4.5 px


@pytest.mark.parametrize("text_b", [TEXT_B, "The trophy didn't fit in the suitcase because it was too small."])
def test_each_texts_heatmap_is_legible_at_1280x720(text_b):
    page = AppTest.from_file(APP, default_timeout=120)
    page.query_params.update(view="compare", text=TEXT_A, text_b=text_b)
    page.session_state[viewport.KEY] = {"size": LAPTOP_1280}
    page.run()
    assert_healthy(page)
    chart = page.get("vega_lite_chart")[0]
    labels = pages.chart_labels(chart)
    widths = [part["width"] for part in spec_parts(json.loads(chart.proto.spec))
              if isinstance(part.get("width"), int | float)
              and pages.title_text(part.get("title", ""), labels).startswith("Text ")]
    assert len(widths) == 2 and min(widths) >= LEGIBLE_PLOT_PX, widths


def test_a_new_text_of_as_many_tokens_keeps_the_bars_spec_and_swaps_their_rows():
    """Built once for as many rows whose words fit its columns alike: the browser swaps the new rows into the chart
    it drew (a new spec is a chart Vega builds again)."""
    page = run_compare(text=IT_A, text_b=IT_B, layer="3", head="1")
    assert_healthy(page)

    def chart():
        [found] = [chart for chart in page.get("vega_lite_chart")
                   if chart_title(chart) == "Each query token's largest change"]
        return found

    spec, rows = chart().proto.spec, by_query(page)
    page.text_input(key="text_b").set_value(IT_B.replace("wide", "big")).run()
    assert_healthy(page)
    assert chart().proto.spec == spec
    assert not np.allclose(by_query(page)["change"], rows["change"]), "the rows are the new text's"


def test_the_bars_spec_is_built_once_for_as_many_rows_and_their_words_are_data():
    rows = pd.DataFrame({"order": range(3), "query": ["it", "'", "<b>"], "key": ["animal", "if", "datum"],
                         "change": [0.3, -0.1, 0.2], "weight in A": [0.5, 0.1, 0.3], "weight in B": [0.2, 0.2, 0.1]})
    spec, data = by_query_drawn(rows, 700)
    other_spec, other = by_query_drawn(rows.assign(change=[-0.2, 0.4, 0.0], query=["a", "b", "c"]), 700)
    assert other_spec is spec, "kept, not built again"
    assert "animal" not in json.dumps(spec) and "<b>" not in json.dumps(spec), "no word is in the spec"
    assert data[BY_QUERY_DATA]["to key"].tolist() == ["→ animal", "→ if", "→ datum"]
    assert other[BY_QUERY_DATA]["query"].tolist() == ["a", "b", "c"]
