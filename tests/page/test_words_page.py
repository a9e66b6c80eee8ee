"""Whole words on the page (words=1): the one-head view's weights and lines, the all-heads view and the compare view
draw a split word as one row and one column, with the numbers of attention/text/words.py."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention.analyses.compare import aligned_difference, aligned_positions
from attention.dissect.heads import head_weights, rollout
from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from attention.text.words import merge_weights, text_words
from components.charts.lines import LINE_THRESHOLD
from tests.charts.test_scrub import datasets, matrix_of
from tests.page.test_view_compare import difference_labels, heatmaps
from tests.page.test_view_heads import assert_pictures, grid, summary
from tests.pages import (
    assert_healthy,
    chart_cell_labels,
    chart_matrix,
    chart_title,
    charts,
    open_page,
    pick_on_chart,
    weights_of,
)

TEXT = "photosynthesis is unbelievable"  # [CLS] photos ##yn ##thesis is unbelievable [SEP]
WORDS = ["[CLS]", "photosynthesis", "is", "unbelievable", "[SEP]"]
TOKENS = ["[CLS]", "photos", "##yn", "##thesis", "is", "unbelievable", "[SEP]"]


def merged(bundled, text: str = TEXT, text_b: str | None = None, **settings) -> np.ndarray:
    """(W, W) the core's weights of the text between its whole words."""
    return merge_weights(weights_of(bundled, text, text_b, **settings),
                         text_words(encode(bundled, text, text_b, layers=()), False).spans)


def labels(chart) -> tuple[list[str], list[str]]:
    return chart_cell_labels(chart)


def head_page(**query: str) -> AppTest:
    page = open_page({"text": TEXT, "layer": "2", "head": "5", **query})
    assert_healthy(page)
    return page


def test_a_link_with_words_merges_the_one_head_weights(bundled):
    page = head_page(words="1")
    [chart] = charts(page)
    assert labels(chart) == (WORDS, WORDS)
    assert "between whole words" in chart_title(chart)
    shown = chart_matrix(chart)
    np.testing.assert_allclose(shown.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(shown, merged(bundled, layer=2, head=5), atol=1e-6)
    assert page.toggle(key="words").value


def test_every_head_the_chart_holds_is_merged_so_scrubbing_shows_words(bundled):
    page = head_page(words="1")
    cells = datasets(charts(page)[0])["p0-cells"]  # every head of every layer sent: a column each, "0" … "71"
    for layer, head in ((0, 0), (2, 5), (5, 11)):
        np.testing.assert_allclose(matrix_of(cells, layer * 12 + head), merged(bundled, layer=layer, head=head),
                                   atol=1e-6, err_msg=f"layer {layer}, head {head}")
    pick_on_chart(page, "chart-weights", layer=4, head=9)
    assert_healthy(page)
    assert (page.query_params["layer"], page.query_params["head"]) == ("4", "9")
    np.testing.assert_allclose(chart_matrix(charts(page)[0]), merged(bundled, layer=4, head=9), atol=1e-6)
    assert labels(charts(page)[0]) == (WORDS, WORDS)


def test_the_toggle_merges_and_writes_the_link():
    page = head_page()
    assert labels(charts(page)[0]) == (TOKENS, TOKENS)
    page.toggle(key="words").set_value(True).run()
    assert_healthy(page)
    assert page.query_params["words"] == "1"
    assert labels(charts(page)[0]) == (WORDS, WORDS)


def test_words_compose_with_hidden_sinks_merged_first(bundled):
    page = head_page(words="1", hide_special="1")
    shown = chart_matrix(charts(page)[0])
    inner = merged(bundled, layer=2, head=5)[1:4, 1:4]  # the words, [CLS] and [SEP] left out after the merge
    np.testing.assert_allclose(shown, inner / inner.sum(axis=1, keepdims=True), atol=1e-6)
    assert labels(charts(page)[0]) == (WORDS[1:4], WORDS[1:4])


def test_words_compose_with_the_sentence_pair_filter(bundled):
    page = head_page(words="1", text_b="unbelievable", pair="a_to_b")
    rows, keys = labels(charts(page)[0])
    assert rows == WORDS and keys == ["unbelievable", "[SEP]"]  # sentence A ends with its [SEP]
    whole = merged(bundled, TEXT, "unbelievable", layer=2, head=5)  # (7, 7): A's five words, then B's two
    np.testing.assert_allclose(chart_matrix(charts(page)[0]), whole[:5, 5:], atol=1e-6)


@pytest.mark.parametrize("stage", ["Raw scores Q·Kᵀ", "Masked scores", "Context vectors"])
def test_the_stages_that_are_no_weights_show_tokens_and_say_so(stage):
    page = head_page(words="1")
    page.segmented_control(key="head_stage").set_value(stage).run()
    assert_healthy(page)
    assert labels(charts(page)[0])[0] == TOKENS
    assert any("This stage shows tokens, not whole words" in caption.value for caption in page.caption)


def test_the_lines_join_whole_words(bundled):
    page = head_page(words="1")
    page.segmented_control(key="head_stage").set_value("Weights as lines").run()
    assert_healthy(page)
    [chart] = charts(page)
    data = datasets(chart)
    lines, tokens = data["lines"], data["tokens"]
    assert list(tokens[tokens["side"] == "q"]["token"]) == WORDS == list(tokens[tokens["side"] == "k"]["token"])
    weights = merged(bundled, layer=2, head=5)
    drawn = lines[(lines["layer"] == 2) & (lines["head"] == 5)]
    np.testing.assert_allclose(drawn["w"], weights[drawn["q"], drawn["k"]], atol=1e-6)
    expected = [tuple(pair) for pair in np.argwhere(weights >= LINE_THRESHOLD)]
    assert sorted(zip(drawn["q"], drawn["k"], strict=True)) == expected
    assert "between whole words" in chart_title(chart)


def test_the_all_heads_view_merges_every_head_and_its_summaries(bundled):
    page = open_page({"text": TEXT, "view": "heads", "layer": "2", "words": "1", "grid_tokens": "1"})
    assert_healthy(page)
    every_head = np.stack([merged(bundled, layer=2, head=head) for head in range(12)])  # (nh, W, W)
    assert_pictures(page, every_head)
    np.testing.assert_allclose(summary(page), every_head.mean(axis=0), atol=1e-6)
    assert "photosynthesis" in grid(page).proto.spec and "##yn" not in grid(page).proto.spec
    page.segmented_control(key="aggregate").set_value("rollout").run()
    assert_healthy(page)
    flow = summary(page)
    every_layer = [head_weights(build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=layer)))
                   for layer in range(3)]
    spans = text_words(encode(bundled, TEXT, layers=()), False).spans
    np.testing.assert_allclose(flow, merge_weights(rollout(every_layer), spans), atol=1e-6)
    np.testing.assert_allclose(flow.sum(axis=1), 1.0, atol=1e-5)


def test_the_compare_view_merges_each_text_then_aligns_their_words(bundled):
    text_b = "unbelievable photosynthesis"
    page = open_page({"text": TEXT, "text_b": text_b, "view": "compare", "layer": "1", "head": "8", "words": "1"})
    assert_healthy(page)
    shown = heatmaps(page)
    a, b = merged(bundled, TEXT, layer=1, head=8), merged(bundled, text_b, layer=1, head=8)
    np.testing.assert_allclose(shown["Text A"], a, atol=1e-6)
    np.testing.assert_allclose(shown["Text B"], b, atol=1e-6)
    # [CLS] photosynthesis is unbelievable [SEP] against [CLS] unbelievable photosynthesis [SEP]: difflib keeps
    # the longest run in order, [CLS] photosynthesis ... [SEP] (or unbelievable), each a whole word
    positions_a, positions_b = aligned_positions(WORDS, ["[CLS]", "unbelievable", "photosynthesis", "[SEP]"])
    assert difference_labels(page) == [WORDS[i] for i in positions_a]
    assert "photosynthesis" in difference_labels(page)
    np.testing.assert_allclose(shown["A − B"], aligned_difference(a, b, positions_a, positions_b), atol=1e-6)
    expected = aligned_difference(a, b, positions_a, positions_b)
    counted = np.abs(expected)
    counted[[0, -1], :] = counted[:, [0, -1]] = -1  # [CLS] and [SEP] left out, as queries and as keys
    assert float(page.metric[0].value) == pytest.approx(expected.flat[counted.argmax()], abs=5e-4)


def test_gpt2s_byte_level_pieces_merge_into_words_on_the_page(tiny_gpt2_checkpoint, tiny_gpt2_model, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))  # the page offers the folder
    page = open_page({"model": str(tiny_gpt2_checkpoint), "text": "the cat sat on the mat", "words": "1",
                      "hide_special": "1", "layer": "1", "head": "2"})
    assert_healthy(page)
    [chart] = charts(page)
    # "t he" is GPT-2's first word, and its sink: hidden with it; "␣m at" is one word
    assert labels(chart) == (["␣cat", "␣sat", "␣on", "␣the", "␣mat"],) * 2
    encoding = encode(tiny_gpt2_model, "the cat sat on the mat")
    whole = merge_weights(weights_of(tiny_gpt2_model, "the cat sat on the mat", layer=1, head=2),
                          text_words(encoding, True).spans)[1:, 1:]
    np.testing.assert_allclose(chart_matrix(charts(page)[0]), whole / whole.sum(axis=1, keepdims=True), atol=1e-6)


def test_words_compose_with_the_value_norm_weighting_weighted_first(bundled):
    """Both toggles: each weight times ‖f(x_j)‖ of its token, rows renormalised, then the pieces merged."""
    from attention.dissect.trace import layer_attention, projections_for
    from attention.dissect.value_norms import value_norms, weighted_by_value_norm

    page = head_page(words="1", value_norm="1")
    [chart] = charts(page)
    assert labels(chart) == (WORDS, WORDS)
    settings = TraceSettings(layer=2)
    layer = layer_attention(bundled, encode(bundled, TEXT), settings)
    norms = value_norms(layer.split("V"), projections_for(bundled, settings).output)[0, 5]  # (T,)
    weighted = weighted_by_value_norm(layer.weights[0, 5], norms)  # (T, T)
    expected = merge_weights(weighted, text_words(encode(bundled, TEXT, layers=()), False).spans)
    np.testing.assert_allclose(chart_matrix(chart), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(chart_matrix(chart).sum(axis=1), 1.0, atol=1e-5)
