"""The switch view's text alternatives (components/charts/switch_text.py): the layer × head grids name the heads of
largest effect with their numbers, as transformers (the sentence embedding) and the core (a guess's drop) have them,
and sentence A's embedding says how far it moved and where; each follows what moves it (the heads switched off, the
text, the sentence)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attention.experiments.embedding_switch import DEFAULT_SECOND
from attention.experiments.embedding_switch import head_ranking as embedding_ranking
from attention.experiments.head_switch import drop_grid, head_ranking
from attention.models.lm_heads import load_language_model
from components.views.switch import DEFAULT_SENTENCE, SENTENCE_KEY
from tests.core.test_embedding_switch import reference_embeddings
from tests.page.test_view_switch import open_view, switch_off
from tests.pages import TEXT, assert_healthy, chart_texts

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
NUMBER = r"[+-]?\d+\.?\d*(?:e[+-]\d+)?"
OTHER_TEXT = "the cat sat on the mat"


def said_starting(page, opening: str) -> str:
    """The one text alternative on the page that starts so."""
    found = [text for text in chart_texts(page) if text.startswith(opening)]
    assert len(found) == 1, chart_texts(page)
    return found[0]


def named_heads(said: str) -> list[tuple[int, int, float]]:
    """(layer, head, value) of each head a grid's text names, in order."""
    return [(int(layer), int(head), float(value))
            for layer, head, value in re.findall(rf"layer (\d+), head (\d+) ({NUMBER})", said)]


def named_dimensions(said: str) -> list[tuple[int, float]]:
    return [(int(column), float(value)) for column, value in re.findall(rf"dimension (\d+) ({NUMBER})", said)]


def close_to_two_figures(said: float, value: float) -> bool:
    """said is value as spoken_numbers.figure writes it (two decimals, or two significant figures below 0.1), give
    or take float32's rounding between the page and transformers."""
    step = 0.01 if abs(value) >= 0.1 else 10 ** (np.floor(np.log10(abs(value))) - 1)
    return abs(said - value) <= 0.5 * step + 1e-5 * abs(value) + 1e-9


def test_the_embedding_grid_names_the_heads_that_move_a_most_as_transformers_moves_it(bundled):
    page = open_view()
    assert_healthy(page)
    said = said_starting(page, "A moved (1 − cos), each head switched off alone, 6 layers × 12 heads. Largest: ")
    _, effects = embedding_ranking(bundled, TEXT, DEFAULT_SECOND)
    named = named_heads(said)
    assert [(layer, head) for layer, head, _ in named] == [(e.layer, e.head) for e in effects[:3]]
    intact = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND))[0]
    for layer, head, value in named:
        off = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND), [(layer, head)])[0]
        assert close_to_two_figures(value, 1 - float(off @ intact)), (layer, head, value)

    page.text_area(key="text").set_value(OTHER_TEXT).run()
    assert_healthy(page)
    _, effects = embedding_ranking(bundled, OTHER_TEXT, DEFAULT_SECOND)
    moved = named_heads(said_starting(page, "A moved (1 − cos)"))
    assert [(layer, head) for layer, head, _ in moved] == [(e.layer, e.head) for e in effects[:3]]
    assert moved != named


def test_the_embedding_chart_says_how_far_a_moved_and_where_as_transformers_moves_it(bundled):
    page = open_view()
    assert_healthy(page)
    intact = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND))[0]  # (C,)
    said = said_starting(page, "Sentence A's embedding, 384 dimensions, all heads on: the row with heads off "
                               "equals it and their difference is 0. Largest values: ")
    largest = np.argsort(-np.abs(intact), kind="stable")[:3]
    assert [column for column, _ in named_dimensions(said)] == largest.tolist()
    assert all(close_to_two_figures(value, intact[column]) for column, value in named_dimensions(said))

    off = [(2, 5), (5, 0), (5, 11)]
    switch_off(page, *off)
    assert_healthy(page)
    after = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND), off)[0]
    said = said_starting(page, "Sentence A's embedding, 384 dimensions, 3 heads off: it moved 1 − cos = ")
    moved = float(re.search(rf"1 − cos = ({NUMBER})\.", said)[1])
    assert close_to_two_figures(moved, 1 - float(after @ intact))
    change = after - intact
    assert [column for column, _ in named_dimensions(said)] == np.argsort(-np.abs(change), kind="stable")[:3].tolist()
    assert all(close_to_two_figures(value, change[column]) for column, value in named_dimensions(said))


def test_the_drop_grid_names_the_heads_of_largest_drop_as_the_core_ranks_them_and_follows_the_sentence(
        masked_lm_folder):
    masked = load_language_model(masked_lm_folder)
    page = open_view(model=masked_lm_folder)
    assert_healthy(page)
    for sentence in (DEFAULT_SENTENCE, "paris is the [MASK] of france"):
        if sentence != DEFAULT_SENTENCE:
            page.text_input(key=SENTENCE_KEY).set_value(sentence).run()
            assert_healthy(page)
        intact, effects = head_ranking(masked, sentence)
        grid = drop_grid(effects, masked.shape)  # (L, nh) in points, as the chart draws it
        said = said_starting(page, f"Drop in P({intact.top_words[0]!r}) in points, each head switched off alone, "
                                   f"{grid.shape[0]} layers × {grid.shape[1]} heads. Largest: ")
        named = named_heads(said)
        largest = np.argsort(-np.abs(grid), axis=None, kind="stable")[:3]
        assert [(layer, head) for layer, head, _ in named] == [divmod(int(index), grid.shape[1]) for index in largest]
        assert all(close_to_two_figures(value, grid[layer, head]) for layer, head, value in named)
        assert all(re.search(rf"head {head} [+-]", said) for _, head, _ in named), "a drop's sign is always said"
