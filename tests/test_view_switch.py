"""Switching heads off through AppTest (as ?view=switch), on a tiny BERT with an MLM head offered as a local folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention.head_switch import head_ranking, load_masked_lm, predict
from components.compute import MODEL_DIRS_ENV
from components.views.switch import DEFAULT_SENTENCE
from tests.conftest import save_tiny_bert
from tests.pages import html_table

APP = str(Path(__file__).resolve().parents[1] / "streamlit_app.py")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny BertForMaskedLM in a folder the page offers (through the model-folders variable)."""
    folder = str(save_tiny_bert(tmp_path_factory.mktemp("tiny-mlm-page"), with_mlm_head=True))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(MODEL_DIRS_ENV, folder)
        yield folder


@pytest.fixture(scope="module")
def masked(checkpoint):
    return load_masked_lm(checkpoint)


def open_view(**query: str) -> AppTest:
    page = AppTest.from_file(APP, default_timeout=120)
    for name, value in {"view": "switch", **query}.items():
        page.query_params[name] = value
    return page.run()


def assert_healthy(page: AppTest) -> None:
    assert not page.exception, [e.message for e in page.exception]


def top5(page: AppTest):
    return html_table(page, "switch-top5")


def ranking(page: AppTest):
    return html_table(page, "switch-ranking")


def heads_off(page: AppTest) -> list[tuple[int, int]]:
    return [(int(p.key.rsplit("_", 1)[1]), head) for p in page.pills for head in p.value]


def test_the_bundled_model_has_no_mlm_head_and_the_view_offers_one(checkpoint):
    page = open_view()
    assert_healthy(page)
    notice = " ".join(i.value for i in page.info)
    assert "all-MiniLM-L6-v2 has no masked-language-model head" in notice
    labels = [b.label for b in page.button]
    assert "Load bert-base-uncased (from the Hugging Face Hub: downloads on first use)" in labels
    assert f"Load {checkpoint}" in labels
    assert not page.pills, "no toggles without a head to predict with"

    page.button(key=f"switch_load_{checkpoint}").click().run()
    assert_healthy(page)
    assert page.query_params["model"] == checkpoint
    assert top5(page)["all heads on"].tolist()


def test_the_top_five_are_the_core_s_and_the_sentence_defaults_to_the_capital_of_france(checkpoint, masked):
    page = open_view(model=checkpoint)
    assert_healthy(page)
    assert page.text_input(key="switch_sentence").value == DEFAULT_SENTENCE
    expected = predict(masked, DEFAULT_SENTENCE)
    table = top5(page)
    assert table["all heads on"].tolist() == list(expected.top_words)
    np.testing.assert_allclose(table["P (all on)"], expected.top_probabilities, rtol=1e-6)
    assert [p.key for p in page.pills] == ["switch_off_0", "switch_off_1"]
    assert all(p.options == ["0", "1", "2", "3"] for p in page.pills)


def test_a_sentence_with_mask_in_the_page_text_is_taken(checkpoint):
    page = open_view(model=checkpoint, text="paris is the [MASK] of france")
    assert_healthy(page)
    assert page.text_input(key="switch_sentence").value == "paris is the [MASK] of france"


def test_toggling_heads_off_updates_the_predictions_as_the_core_does(checkpoint, masked):
    page = open_view(model=checkpoint)
    page.pills(key="switch_off_1").set_value([2]).run()
    assert_healthy(page)
    intact, alone = predict(masked, DEFAULT_SENTENCE), predict(masked, DEFAULT_SENTENCE, [(1, 2)])
    table = top5(page)
    assert table["with 1 head off"].tolist() == list(alone.top_words)
    np.testing.assert_allclose(table["P (1 head off)"], alone.top_probabilities, rtol=1e-6)
    metric = page.metric[0]
    assert metric.label == f"P({intact.top_words[0]}), 1 head off"
    assert metric.value.endswith("%")

    page.pills(key="switch_off_0").set_value([0, 3]).run()
    assert_healthy(page)
    both = predict(masked, DEFAULT_SENTENCE, [(0, 0), (0, 3), (1, 2)])
    assert top5(page)["with 3 heads off"].tolist() == list(both.top_words)

    page.button(key="switch_reset").click().run()
    assert_healthy(page)
    assert heads_off(page) == []
    assert "with 1 head off" not in top5(page).columns


def test_the_ranking_is_the_core_s_and_its_button_switches_the_strongest_off(checkpoint, masked):
    page = open_view(model=checkpoint)
    _, effects = head_ranking(masked, DEFAULT_SENTENCE)
    table = ranking(page)
    assert list(zip(table["layer"], table["head"], strict=True)) == [(e.layer, e.head) for e in effects]
    np.testing.assert_allclose(table["drop (points)"], [100 * e.drop for e in effects], atol=1e-7)

    page.button(key="switch_strongest").click().run()
    assert_healthy(page)
    assert sorted(heads_off(page)) == sorted((e.layer, e.head) for e in effects[:3])
    expected = predict(masked, DEFAULT_SENTENCE, [(e.layer, e.head) for e in effects[:3]])
    assert top5(page)["with 3 heads off"].tolist() == list(expected.top_words)


def test_a_sentence_without_mask_gets_a_notice(checkpoint):
    page = open_view(model=checkpoint)
    page.text_input(key="switch_sentence").input("the capital of france is paris .").run()
    assert_healthy(page)
    assert any("exactly one [MASK]" in w.value for w in page.warning)
