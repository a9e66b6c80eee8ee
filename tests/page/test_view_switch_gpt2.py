"""The switch view on a GPT-2 through AppTest (as ?view=switch&model=<folder>): it guesses the token after the
text with GPT-2's own LM head, ranks the heads by what each carries of that guess, and toggles switch them off.

The model is a tiny GPT-2 with peaked guesses (tests/core/test_next_token.py says why), offered as a local folder.
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention.experiments.head_switch import head_ranking, predict
from attention.models.lm_heads import load_language_model
from components.caches.offered import MODEL_DIRS_ENV
from components.views.switch import OBJECTIVE_KEY, SENTENCE_KEY, percent
from harness.reference import transformers_tokenizer
from tests.core.test_next_token import save_peaked_gpt2
from tests.page.test_view_switch import caption, chip_rows, heads_off, numbers, open_view, switch_off, toggles, top5
from tests.pages import APP, TEXT, assert_healthy, html_table


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny GPT-2 in a folder the page offers (through the model-folders variable)."""
    folder = str(save_peaked_gpt2(tmp_path_factory.mktemp("peaked-gpt2-page")))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(MODEL_DIRS_ENV, folder)
        yield folder


@pytest.fixture(scope="module")
def language_model(checkpoint):
    return load_language_model(checkpoint)


@pytest.fixture(scope="module")
def page(checkpoint) -> AppTest:
    page = open_view(model=checkpoint)
    assert_healthy(page)
    return page


def test_the_view_guesses_the_token_after_the_page_s_text(page, language_model):
    box = page.text_input(key=SENTENCE_KEY)
    assert box.label == "The text to continue"
    assert box.value == TEXT, "the page's text, with no [MASK] needed"
    assert not page.warning
    expected = predict(language_model, TEXT)
    table = top5(page)
    assert table["all heads on"].tolist() == list(expected.top_words)
    np.testing.assert_allclose(table["P (all on)"], expected.top_probabilities, rtol=1e-5, atol=1e-6)
    [metric] = numbers(page)
    assert metric.label == f"P({expected.top_words[0]}), all heads on"
    assert metric.value == percent(expected.top_probabilities[0])
    assert caption(page).startswith(f"The guesses for the token after “{expected.tokens[-1]}”")


def test_tokens_and_guesses_read_as_letters_with_a_mark_for_a_space(page, language_model):
    [chips] = chip_rows(page)
    tokenizer = transformers_tokenizer(language_model.model)
    assert chips == list(language_model.family.readable(tokenizer.convert_ids_to_tokens(tokenizer(TEXT)["input_ids"])))
    assert "␣flies" in chips
    shown = chips + top5(page)["all heads on"].tolist()
    shown += html_table(page, "switch-ranking")["top token without it"].tolist()
    assert not [token for token in shown if "Ġ" in token], shown


def test_the_heads_are_ranked_by_the_drop_of_the_top_next_token(page, language_model):
    _, effects = head_ranking(language_model, TEXT)
    table = html_table(page, "switch-ranking")
    assert list(zip(table["layer"], table["head"], strict=True)) == [(e.layer, e.head) for e in effects]
    np.testing.assert_allclose(table["drop (points)"], [100 * e.drop for e in effects], atol=1e-4)
    assert toggles(page) == {"layers": 2, "heads": 4, "off": []}


def test_switching_the_top_ranked_head_off_changes_the_shown_probability(checkpoint, language_model):
    page = open_view(model=checkpoint)
    intact, effects = head_ranking(language_model, TEXT)
    strongest = effects[0]
    before = numbers(page)[0].value
    switch_off(page, (strongest.layer, strongest.head))
    assert_healthy(page)
    assert heads_off(page) == [(strongest.layer, strongest.head)]
    [metric] = numbers(page)
    alone = predict(language_model, TEXT, [(strongest.layer, strongest.head)])
    assert metric.label == f"P({intact.top_words[0]}), 1 head off"
    assert metric.value == percent(alone.probability_of(intact.top_ids[0])) != before
    assert top5(page)["with 1 head off"].tolist() == list(alone.top_words)

    page.button(key="switch_reset").click().run()
    assert_healthy(page)
    assert heads_off(page) == [] and numbers(page)[0].value == before


def test_a_mask_in_a_gpt2_text_is_just_text(checkpoint, language_model):
    page = open_view(model=checkpoint)
    page.text_input(key=SENTENCE_KEY).input("the capital of france is [MASK]").run()
    assert_healthy(page)
    assert not page.warning
    expected = predict(language_model, "the capital of france is [MASK]")
    assert top5(page)["all heads on"].tolist() == list(expected.top_words)
    page.text_input(key=SENTENCE_KEY).input("   ").run()
    assert any("Type a text for the model to continue" in w.value for w in page.warning)


def test_a_sentence_typed_for_bert_s_mask_starts_over_with_gpt2(checkpoint):
    page = AppTest.from_file(APP, default_timeout=120)
    page.query_params["view"], page.query_params["model"] = "switch", checkpoint
    page.session_state[SENTENCE_KEY] = "the capital of france is [MASK] ."  # as BERT's view left it
    page.session_state[OBJECTIVE_KEY] = "masked"
    page.run()
    assert_healthy(page)
    assert page.text_input(key=SENTENCE_KEY).value == TEXT
