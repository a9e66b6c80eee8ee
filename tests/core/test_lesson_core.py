"""The lesson's computed claims (attention.analyses.lesson), on small hand-made matrices and the bundled tokenizer."""

from __future__ import annotations

import numpy as np
import pytest

from attention.analyses.lesson import (
    NOTEBOOK_PAIR,
    SharedWord,
    diagonal_wins,
    falling_layers,
    head_block,
    row_sum_error,
    shared_word,
    shared_words,
    strongest_keys,
    telling_word,
    twin_wins,
    whole_word_positions,
)
from attention.text.encoding import encode


def test_the_notebooks_pair_shares_flies_at_the_same_place(bundled):
    first, second = (encode(bundled, text) for text in NOTEBOOK_PAIR)
    assert shared_word(first, second) == SharedWord("flies", 2, 2)


def test_word_pieces_and_special_tokens_are_not_whole_words(bundled):
    encoding = encode(bundled, "let's tokenize something?")
    tokens = encoding.tokens[0]
    assert "##ize" in tokens
    words = [tokens[i] for i in whole_word_positions(encoding)]
    assert "token" not in words and "##ize" not in words
    assert "[CLS]" not in words and "?" not in words
    assert "something" in words


def test_the_shared_word_is_the_first_of_the_first_text_found_in_the_second(bundled):
    first, second = encode(bundled, "a cat sat on the mat"), encode(bundled, "the dog sat down, the end")
    assert shared_word(first, second) == SharedWord("sat", 3, 3)
    assert shared_word(encode(bundled, "tokenize"), encode(bundled, "token")) is None


def test_shared_words_are_listed_once_each_and_the_telling_one_is_not_a_stop_word(bundled):
    first, second = encode(bundled, "the bank of the river"), encode(bundled, "the bank raised the rates")
    words = shared_words(first, second)
    assert words == [SharedWord("the", 1, 1), SharedWord("bank", 2, 2)]
    assert telling_word(words) == SharedWord("bank", 2, 2)
    only_stop_words = shared_words(encode(bundled, "of the"), encode(bundled, "the end of it"))
    assert telling_word(only_stop_words) == SharedWord("of", 1, 3)
    assert telling_word([]) is None


def test_diagonal_wins_counts_rows_that_peak_on_themselves():
    scores = np.array([[3.0, 1.0, 0.0], [5.0, 2.0, 0.0], [0.0, 1.0, 4.0]])
    assert diagonal_wins(scores) == 2


def test_twin_wins_counts_rows_whose_next_best_is_a_copy():
    tokens = ("a", "b", "a", "c")
    scores = np.array([
        [9.0, 1.0, 5.0, 0.0],  # row of the first "a": next best is the other "a"
        [0.0, 9.0, 0.0, 0.0],
        [1.0, 6.0, 9.0, 0.0],  # second "a": next best is "b"
        [0.0, 0.0, 0.0, 9.0],
    ])
    assert twin_wins(scores, tokens) == (2, 1)
    assert twin_wins(scores, ("a", "b", "c", "d")) == (0, 0)


def test_row_sum_error_is_the_largest_distance_from_one():
    weights = np.array([[0.5, 0.5], [0.7, 0.2]], dtype=np.float32)
    assert row_sum_error(weights) == pytest.approx(0.1, abs=1e-6)


def test_strongest_keys_sorts_each_rows_largest_weight():
    special = np.array([True, False, False, False, True])
    weights = np.array([
        [0.1, 0.6, 0.1, 0.1, 0.1],  # [CLS] row, largest on token 1: its next token
        [0.1, 0.1, 0.1, 0.1, 0.6],  # on [SEP]: special
        [0.1, 0.1, 0.6, 0.1, 0.1],  # on itself
        [0.1, 0.1, 0.6, 0.1, 0.1],  # on the previous token
        [0.1, 0.6, 0.1, 0.1, 0.1],  # on a token further away
    ])
    assert strongest_keys(weights, special) == {"sink": 1, "self": 1, "previous": 1, "next": 1, "other": 1}


def test_head_block_is_the_heads_slice_of_the_concatenation():
    contexts = np.arange(2 * 3 * 4).reshape(2, 3, 4)  # (nh, T, d)
    concat = contexts.transpose(1, 0, 2).reshape(3, 8)  # (T, nh·d)
    np.testing.assert_array_equal(head_block(concat, 1, 4), contexts[1])


def test_falling_layers_counts_drops_only():
    assert falling_layers(np.array([1.0, 0.9, 0.95, 0.8, 0.8])) == 2


def test_a_byte_level_texts_whole_words_start_with_a_space_and_no_piece_follows_them(tiny_gpt2_model):
    """GPT-2's "␣m"+"at" is one word in two pieces, and "t"+"he" too: neither is offered as a whole word."""
    from attention.analyses.lesson import whole_word_positions, word_text
    from attention.text.encoding import encode

    encoding = encode(tiny_gpt2_model, "the cat sat on the mat")
    tokens = encoding.tokens[0]
    assert tokens == ("t", "he", "␣cat", "␣sat", "␣on", "␣the", "␣m", "at")
    assert [tokens[position] for position in whole_word_positions(encoding)] == ["␣cat", "␣sat", "␣on", "␣the"]
    assert encode(tiny_gpt2_model, word_text("␣cat")).tokens[0] == ("␣cat",), "the word read on its own"


def test_a_wordpiece_texts_whole_words_are_as_before(bundled):
    from attention.analyses.lesson import whole_word_positions
    from attention.text.encoding import encode

    encoding = encode(bundled, "the tokenizer splits unbelievable words")
    words = [encoding.tokens[0][position] for position in whole_word_positions(encoding)]
    assert "the" in words and "words" in words
    assert not any(word.startswith("##") for word in words)
