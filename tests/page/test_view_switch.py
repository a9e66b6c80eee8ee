"""Switching heads off through AppTest (as ?view=switch): the bundled sentence-embedding model, and a tiny BERT
with an MLM head offered as a local folder."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention.experiments.embedding_switch import DEFAULT_SECOND
from attention.experiments.embedding_switch import head_ranking as embedding_ranking
from attention.experiments.head_switch import head_ranking, predict
from attention.models.lm_heads import load_language_model
from attention.models.model_list import BUNDLED_MODEL
from components.server.switch_asks import ASKS, SwitchAsks
from components.views.parts.head_toggles import NAME, valid_pairs
from components.views.switch import DEFAULT_SENTENCE, answer
from tests.core.test_embedding_switch import reference_embeddings
from tests.pages import TEXT, assert_healthy, chart_title, html_table, open_page, table_in

APP = str(Path(__file__).resolve().parents[2] / "page.py")


@pytest.fixture(scope="module")
def checkpoint(masked_lm_folder):
    """The tiny BertForMaskedLM the page offers (tests/page/conftest.py)."""
    return masked_lm_folder


@pytest.fixture(scope="module")
def masked(checkpoint):
    return load_language_model(checkpoint)


def open_view(**query: str) -> AppTest:
    page = AppTest.from_file(APP, default_timeout=120)
    for name, value in {"view": "switch", **query}.items():
        page.query_params[name] = value
    return page.run()


def top5(page: AppTest):
    """The five guesses before and after, from the numbers the toggles' script shows."""
    return table_in(sent_to_toggles(page)["numbers"])


def caption(page: AppTest) -> str:
    """What the guesses are for, the line under them in the toggles' script."""
    return html.unescape(re.search(r'data-testid="switch-caption">(.*?)</p>', sent_to_toggles(page)["numbers"])[1])


def ranking(page: AppTest):
    return html_table(page, "switch-ranking")


def sent_to_toggles(page: AppTest) -> dict | None:
    """What the page sent its toggles' script, or None when it drew no toggles."""
    sent = [e.proto.json for e in page.get("bidi_component") if e.proto.component_name == NAME]
    return json.loads(sent[0]) if sent else None


def toggles(page: AppTest) -> dict | None:
    """The toggles' {"layers", "heads", "off"}, or None when the page drew none."""
    sent = sent_to_toggles(page)
    return None if sent is None else {name: sent[name] for name in ("layers", "heads", "off")}


@dataclass(frozen=True)
class Metric:
    label: str
    value: str
    delta: str | None


_METRIC = re.compile(r'<div class="aa-metric-label"[^>]*>(.*?)</div><div class="aa-metric-value">(.*?)</div>'
                     r'(?:<div class="aa-metric-delta \w+">[▲▼] (.*?)</div>)?')


def numbers(page: AppTest) -> list[Metric]:
    """The numbers the toggles' script shows above its buttons (a metric each), as the reader reads them."""
    return [Metric(*(html.unescape(part) if part else None for part in found))
            for found in _METRIC.findall(sent_to_toggles(page)["numbers"])]


def heads_off(page: AppTest) -> list[tuple[int, int]]:
    """The heads the page marks as switched off."""
    return [tuple(pair) for pair in toggles(page)["off"]]


def switch_off(page: AppTest, *pairs: tuple[int, int]) -> AppTest:
    """Switch exactly these (layer, head) pairs off, as a press in the browser does (its callback writes the set to
    the page's state: tests/browser/test_switch_toggles_e2e.py presses the buttons), and run the page."""
    page.session_state["_page_state"]["off"] = tuple(sorted(pairs))
    return page.run()


def chip_rows(page: AppTest) -> list[list[str]]:
    """Each row of token chips on the page, its tokens as the reader sees them (unescaped)."""
    bodies = [e.proto.body for e in page.get("html") if 'data-testid="token-chips"' in e.proto.body]
    return [[html.unescape(t) for t in re.findall(r'title="token \d+"><small>\d+</small>(.*?)</span>', body)]
            for body in bodies]


def test_the_bundled_model_switches_heads_in_its_sentence_embedding_offline(checkpoint, bundled):
    page = open_view()
    assert_healthy(page)
    assert not page.warning
    labels = [b.label for b in page.button]
    assert not [label for label in labels if "Hub" in label or "bert-base" in label], labels  # cannot work offline
    # a local folder loads offline, named by its own name: its whole path is the server's disk
    assert f"Load {Path(checkpoint).name}" in labels and not [label for label in labels if checkpoint in label]
    assert toggles(page) == {"layers": 6, "heads": 12, "off": []}
    intact = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND))
    similarity, moved = numbers(page)
    assert similarity.label == "cos(A, B), all heads on" and similarity.delta is None
    assert float(similarity.value) == pytest.approx(float(intact[0] @ intact[1]), abs=1e-4)
    assert moved.value == "0.0000", "A has not moved; float32 rounding must not show it as -0.0000"
    assert any("No second sentence is typed, so B is a default one" in c.value for c in page.caption)

    switch_off(page, (2, 5), (5, 0), (5, 11))
    assert_healthy(page)
    off = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND), [(2, 5), (5, 0), (5, 11)])
    similarity, moved = numbers(page)
    assert similarity.label == "cos(A, B), 3 heads off"
    assert float(similarity.value) == pytest.approx(float(off[0] @ off[1]), abs=1e-4)
    assert float(similarity.delta) == pytest.approx(float(off[0] @ off[1] - intact[0] @ intact[1]), abs=1e-4)
    assert float(moved.value) == pytest.approx(1 - float(off[0] @ intact[0]), abs=1e-4)
    assert "Sentence A's embedding" in [chart_title(c) for c in page.get("vega_lite_chart")]


def registered_ask(page: AppTest) -> dict[str, str]:
    """What the page registered for the route to answer, found by the one id its toggles' script is given."""
    asked = parse_qs(sent_to_toggles(page)["ask"])
    assert list(asked) == ["ask"], "the script is given an id, never the texts"
    return ASKS.find(asked["ask"][0])


def test_the_route_answers_a_press_with_the_numbers_the_run_after_it_sends(bundled):
    page = open_view()
    ask = registered_ask(page)
    assert ask == {"model": BUNDLED_MODEL, "text": TEXT, "second": DEFAULT_SECOND}
    assert answer(ask, "") == sent_to_toggles(page)["numbers"]
    switch_off(page, (2, 5), (5, 0))
    # The order of a press's set is the browser's: the answer is the run's all the same, so the run repaints nothing.
    assert answer(ask, "5:0,2:5") == sent_to_toggles(page)["numbers"]
    assert numbers(page)[0].label == "cos(A, B), 2 heads off"


def test_the_route_answers_a_press_on_a_model_that_guesses_as_the_run_after_it(checkpoint):
    page = open_view(model=checkpoint)
    ask = registered_ask(page)
    assert ask == {"model": checkpoint, "sentence": DEFAULT_SENTENCE}
    switch_off(page, (1, 2), (0, 3))
    assert answer(ask, "1:2,0:3") == sent_to_toggles(page)["numbers"]
    assert top5(page).columns[-1] == "P (2 heads off)"
    refused = [({"sentence": "no mask here"}, "", r"exactly one \[MASK\]"),
               ({"sentence": "x" * 501}, "", "at most 500"), ({}, "2:0", "heads of a 2 × 4 model")]
    for change, off, why in refused:
        with pytest.raises(ValueError, match=why):
            answer({**ask, **change}, off)


def test_the_same_ask_gets_the_same_id_and_another_process_s_ids_are_unknown_here(bundled):
    first, second = registered_ask(open_view()), open_view()
    assert sent_to_toggles(second)["ask"] == sent_to_toggles(open_view())["ask"], "one id for one ask"
    other = SwitchAsks()
    assert other.find(parse_qs(sent_to_toggles(second)["ask"])["ask"][0]) is None
    assert other.find(other.register(first)) == first
    assert ASKS.find("A" * 22) is None and ASKS.find("") is None and ASKS.find("../" * 8) is None


def test_only_the_newest_asks_are_kept():
    asks = SwitchAsks(keep=3)
    ids = [asks.register({"model": "m", "text": str(n), "second": "b"}) for n in range(5)]
    asks.find(ids[2])  # in use: kept past a newer one
    asks.register({"model": "m", "text": "5", "second": "b"})
    assert [asks.find(i) is not None for i in ids] == [False, False, True, False, True] and len(asks) == 3


@pytest.mark.parametrize(("change", "why"), [
    ({"model": "bert-base-uncased"}, "not a model this server has loaded"),
    ({"model": ""}, "not a model this server has loaded"),
    ({"text": " "}, "a text and a second sentence"),
    ({"second": ""}, "a text and a second sentence"),
    ({"text": "a" * 10_001}, "a text and a second sentence"),
    ({"off": "1:x"}, "heads off as layer:head"),
    ({"off": "1:-1"}, "heads off as layer:head"),
    ({"off": "1"}, "heads off as layer:head"),
    ({"off": "1:²"}, "heads off as layer:head"),  # a digit to str.isdigit, not to int()
    ({"off": "6:0"}, "heads of a 6 × 12 model"),
    ({"off": "0:12"}, "heads of a 6 × 12 model"),
    ({"off": "1:3,1:3"}, "heads of a 6 × 12 model"),
])
def test_the_route_refuses_what_the_page_would_not_run(change, why):
    query = {"model": BUNDLED_MODEL, "text": TEXT, "second": DEFAULT_SECOND, "off": "1:3", **change}
    off = query.pop("off")
    with pytest.raises(ValueError, match=why):
        answer(query, off)


def test_heads_off_belong_to_one_model_and_a_new_model_starts_with_all_heads_on(checkpoint):
    page = switch_off(open_view(), (1, 3), (5, 11))
    assert heads_off(page) == [(1, 3), (5, 11)]
    page.selectbox(key="model").set_value(checkpoint).run()
    assert_healthy(page)
    assert toggles(page) == {"layers": 2, "heads": 4, "off": []}


def test_only_the_model_s_own_heads_are_taken_from_what_the_browser_sends():
    assert valid_pairs([[5, 11], [0, 1], [0, 1]], 6, 12) == ((0, 1), (5, 11))
    for forged in (None, "0,1", 3, [[6, 0]], [[0, 12]], [[-1, 0]], [[True, 1]], [["0", "1"]], [[0, 1, 2]],
                   [[1.0, 2]], [{"layer": 0}], [[0, 10**30]]):
        assert valid_pairs(forged, 6, 12) == (), forged


def test_the_bundled_model_ranks_heads_by_how_far_they_move_the_embedding(bundled):
    page = open_view(text_b="an arrow flies fast")
    assert_healthy(page)
    _, effects = embedding_ranking(bundled, TEXT, "an arrow flies fast")
    table = html_table(page, "switch-embedding-ranking")
    assert list(zip(table["layer"], table["head"], strict=True)) == [(e.layer, e.head) for e in effects[:10]]
    np.testing.assert_allclose(table["A moved"], [e.moved for e in effects[:10]], atol=1e-6)
    page.button(key="switch_strongest").click().run()
    assert_healthy(page)
    assert sorted(heads_off(page)) == sorted((e.layer, e.head) for e in effects[:3])
    assert numbers(page)[0].label == "cos(A, B), 3 heads off"
    assert any("A is the sidebar's text and B its second sentence" in c.value for c in page.caption)


def test_the_chips_show_the_sentences_the_view_works_on(checkpoint):
    page = open_view(text_b="an arrow <b>flies</b>")
    assert_healthy(page)
    assert chip_rows(page) == [["[CLS]", "time", "flies", "like", "an", "arrow", "[SEP]"],
                               ["[CLS]", "an", "arrow", "<", "b", ">", "flies", "<", "/", "b", ">", "[SEP]"]]
    page = open_view(model=checkpoint, text="time flies")
    assert_healthy(page)
    assert chip_rows(page) == [["[CLS]", "the", "capital", "of", "france", "is", "[MASK]", ".", "[SEP]"]]


def test_a_blank_second_sentence_takes_the_default_and_a_blank_text_gets_the_page_s_notice():
    page = open_view(text_b="   ")
    assert_healthy(page)
    assert chip_rows(page)[1] == ["[CLS]", *DEFAULT_SECOND.split(), "[SEP]"]
    assert any("No second sentence is typed" in c.value for c in page.caption)
    page = open_view(text="   ")
    assert_healthy(page)
    assert any("Type a sentence in the sidebar" in i.value for i in page.info)
    assert toggles(page) is None


def test_the_top_five_are_the_core_s_and_the_sentence_defaults_to_the_capital_of_france(checkpoint, masked):
    page = open_view(model=checkpoint)
    assert_healthy(page)
    assert page.text_input(key="switch_sentence").value == DEFAULT_SENTENCE
    expected = predict(masked, DEFAULT_SENTENCE)
    table = top5(page)
    assert table["all heads on"].tolist() == list(expected.top_words)
    np.testing.assert_allclose(table["P (all on)"], expected.top_probabilities, rtol=1e-5, atol=1e-6)
    assert toggles(page) == {"layers": 2, "heads": 4, "off": []}


def test_a_sentence_with_mask_in_the_page_text_is_taken(checkpoint):
    page = open_view(model=checkpoint, text="paris is the [MASK] of france")
    assert_healthy(page)
    assert page.text_input(key="switch_sentence").value == "paris is the [MASK] of france"


def test_toggling_heads_off_updates_the_predictions_as_the_core_does(checkpoint, masked):
    page = open_view(model=checkpoint)
    switch_off(page, (1, 2))
    assert_healthy(page)
    intact, alone = predict(masked, DEFAULT_SENTENCE), predict(masked, DEFAULT_SENTENCE, [(1, 2)])
    table = top5(page)
    assert table["with 1 head off"].tolist() == list(alone.top_words)
    np.testing.assert_allclose(table["P (1 head off)"], alone.top_probabilities, rtol=1e-5, atol=1e-6)
    [metric] = numbers(page)
    assert metric.label == f"P({intact.top_words[0]}), 1 head off"
    assert metric.value.endswith("%") and metric.delta.endswith(" points")

    switch_off(page, (0, 0), (0, 3), (1, 2))
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


def test_the_attention_controls_that_do_not_apply_to_it_are_not_drawn():
    page = open_view()
    assert_healthy(page)
    drawn = {widget.key for widget in [*page.slider, *page.segmented_control]}
    assert not drawn & {"source", "layer", "head", "scaling"}
    head_view = open_page({"view": "head"})
    assert {"source", "scaling"} <= {widget.key for widget in head_view.segmented_control}
