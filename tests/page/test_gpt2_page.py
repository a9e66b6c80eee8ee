"""The page on a GPT-2 checkpoint folder opened by a link (model=<folder>): every view draws, with GPT-2's tokens
readable, its family named, and what it cannot read said in words. The tiny GPT-2 is built by the tests
(harness/checkpoints.py): random weights, a byte-level BPE trained offline."""

from __future__ import annotations

import json

import pytest

from components.page.view_list import VIEW_NAMES, view_named
from tests.pages import assert_healthy, chart_labels, open_page, warnings

TEXT = "what if it rains tomorrow"


@pytest.fixture
def gpt2_link(tiny_gpt2_checkpoint, monkeypatch):
    """The query parameters of a link to the tiny GPT-2, which the page offers as a configured folder."""
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    return {"model": str(tiny_gpt2_checkpoint), "text": TEXT}


@pytest.mark.parametrize("view", VIEW_NAMES)
def test_every_view_draws_on_gpt2(view, gpt2_link):
    page = open_page({**gpt2_link, "view": view})
    assert_healthy(page)
    if not view_named(view).standalone:  # the toys train their own heads and name no model
        assert any("GPT-2" in caption.value and "looks back only" in caption.value for caption in page.caption)


def test_gpt2s_tokens_read_with_a_mark_for_a_space_never_g_breve(gpt2_link):
    page = open_page({**gpt2_link, "view": "head"})
    assert_healthy(page)
    chips = "".join(block.proto.body for block in page.get("html"))
    assert "␣it" in chips and "Ġ" not in chips
    drawn = [json.dumps([json.loads(chart.proto.spec), chart_labels(chart)], ensure_ascii=False)
             for chart in page.get("vega_lite_chart")]
    assert drawn and all("Ġ" not in chart for chart in drawn)
    assert any("␣it" in chart for chart in drawn), "the heatmap's token labels"


def test_a_second_sentence_is_left_out_for_gpt2_with_a_notice(gpt2_link):
    page = open_page({**gpt2_link, "view": "head", "text_b": "fruit flies like a banana"})
    assert_healthy(page)
    assert "GPT-2 reads one text" in warnings(page)


def test_the_compare_view_runs_two_texts_on_gpt2(gpt2_link):
    page = open_page({**gpt2_link, "view": "compare", "text_b": "what if it snows tomorrow"})
    assert_healthy(page)
    assert "GPT-2 reads one text" not in warnings(page)
    assert any("The sinks (the first token) are left out" in caption.value for caption in page.caption)


def test_gpt2s_words_are_its_own_the_trained_source_its_sinks_and_its_folders_name(gpt2_link, tiny_gpt2_checkpoint):
    """Nothing on a GPT-2's page speaks of BERT: its trained weights are "trained", the atlas's legend has no [SEP]
    (GPT-2 has none), and its model is named by its folder's name, not by a path of the server's disk."""
    page = open_page({**gpt2_link, "view": "head"})
    assert_healthy(page)
    assert page.segmented_control(key="source").options == ["identity", "random", "trained"]
    folder = str(tiny_gpt2_checkpoint)
    line = next(caption.value for caption in page.caption if "looks back only" in caption.value)
    assert line.startswith(f"{tiny_gpt2_checkpoint.name}: ") and folder not in line
    model = page.selectbox(key="model")
    assert tiny_gpt2_checkpoint.name in model.options and folder not in model.options
    assert folder in model.help, "the whole path where it helps: the selector's help"

    atlas = open_page({**gpt2_link, "view": "atlas", "atlas": "text"})
    assert_healthy(atlas)
    grid = next(chart for chart in atlas.get("vega_lite_chart") if "behaviour" in chart.proto.spec)
    legend = json.loads(grid.proto.spec)["encoding"]["color"]["scale"]["domain"]
    assert "[SEP]" not in legend and "first token" in legend
    # Its random heads spread about evenly over the keys they may see: broad, not "mixed" (divided by ln T, a causal
    # head's entropy could never pass for broad)
    assert "Of 8 heads: 8 broad." in "\n".join(block.value for block in atlas.markdown)
