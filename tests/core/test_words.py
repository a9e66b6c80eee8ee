"""Whole words (attention/text/words.py): a word's pieces merged, attention to a word summed, from a word averaged."""

from __future__ import annotations

import numpy as np
import pytest

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from attention.text.words import merge_weights, spans_from_tokens, spans_from_word_ids, text_words, word_label

SPLIT_TEXT = "photosynthesis is unbelievable"  # the bundled tokenizer: photos ##yn ##thesis, one word in three


def clark_word_word_attention(token_token_attention: np.ndarray, words_to_tokens: list[list[int]]) -> np.ndarray:
    """Clark et al. 2019's get_word_word_attention (clarkkev/attention-analysis, bpe_utils.py), mode "mean", as
    they wrote it: each word's key columns summed into its first piece's, then its query rows averaged into its
    first piece's, and the other pieces' columns and rows deleted."""
    word_word_attention = np.array(token_token_attention, dtype=np.float64)
    not_word_starts = [token for word in words_to_tokens for token in word[1:]]
    for word in words_to_tokens:
        word_word_attention[:, word[0]] = word_word_attention[:, word].sum(axis=-1)
    word_word_attention = np.delete(word_word_attention, not_word_starts, -1)
    for word in words_to_tokens:
        word_word_attention[word[0]] = np.mean(word_word_attention[word], axis=0)
    return np.delete(word_word_attention, not_word_starts, 0)


def random_weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Softmax rows of random scores: (..., T, T), each row summing to 1."""
    scores = rng.normal(size=shape)
    weights = np.exp(scores)
    return weights / weights.sum(axis=-1, keepdims=True)


def test_synthetic_weights_give_the_known_sums_and_means():
    weights = np.array([[0.1, 0.2, 0.3, 0.4],
                        [0.0, 0.5, 0.5, 0.0],
                        [1.0, 0.0, 0.0, 0.0],
                        [0.25, 0.25, 0.25, 0.25]])
    spans = ((0, 1), (1, 3), (3, 4))  # tokens 1 and 2 are one word
    merged = merge_weights(weights, spans)
    # to the word: its two columns summed; from it: rows 1 and 2 averaged, after that sum
    np.testing.assert_allclose(merged, [[0.1, 0.5, 0.4],
                                        [0.5, 0.5, 0.0],
                                        [0.25, 0.5, 0.25]])


def test_every_row_still_sums_to_one_and_a_stack_merges_head_by_head():
    weights = random_weights(np.random.default_rng(0), 2, 3, 9, 9)  # (layers, heads, T, T)
    spans = ((0, 1), (1, 4), (4, 5), (5, 7), (7, 9))
    merged = merge_weights(weights, spans)
    assert merged.shape == (2, 3, 5, 5)
    np.testing.assert_allclose(merged.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(merged[1, 2], merge_weights(weights[1, 2], spans))


def test_float32_weights_stay_float32():
    weights = random_weights(np.random.default_rng(1), 6, 6).astype(np.float32)
    assert merge_weights(weights, ((0, 2), (2, 6))).dtype == np.float32


def test_one_token_per_word_is_the_weights_themselves():
    weights = random_weights(np.random.default_rng(2), 5, 5)
    assert merge_weights(weights, tuple((i, i + 1) for i in range(5))) is weights


@pytest.mark.parametrize("spans", [((0, 2), (3, 5)), ((0, 2), (2, 4)), ((1, 5),), ((0, 3), (3, 3), (3, 5)), ()])
def test_spans_that_leave_out_or_overlap_tokens_are_refused(spans):
    with pytest.raises(ValueError, match="cover the 5 tokens"):
        merge_weights(np.eye(5), spans)


def test_equals_clark_et_al_on_random_weights():
    rng = np.random.default_rng(3)
    spans = ((0, 1), (1, 2), (2, 5), (5, 6), (6, 8), (8, 9), (9, 12))
    weights = random_weights(rng, 12, 12)
    np.testing.assert_allclose(merge_weights(weights, spans),
                               clark_word_word_attention(weights, [list(range(*span)) for span in spans]), rtol=1e-12)


def test_a_word_split_in_three_is_one_row_and_one_column_of_the_real_model(bundled):
    encoding = encode(bundled, SPLIT_TEXT)
    assert encoding.tokens[0][1:4] == ("photos", "##yn", "##thesis")  # the word this test is about
    words = text_words(encoding, bundled.family.byte_level)
    assert words.labels == ("[CLS]", "photosynthesis", "is", "unbelievable", "[SEP]")
    assert words.spans[1] == (1, 4)
    weights = build_trace(bundled, encoding, TraceSettings(layer=2, head=5))["weights"][0]  # (T, T)
    merged = merge_weights(weights, words.spans)  # (W, W)
    assert merged.shape == (5, 5)
    np.testing.assert_allclose(merged.sum(axis=-1), 1.0, rtol=1e-5)
    # to "photosynthesis": its three columns summed; from it: its three rows averaged
    np.testing.assert_allclose(merged[[0, 2, 3, 4], 1], weights[[0, 4, 5, 6], 1:4].sum(axis=-1), rtol=1e-5)
    np.testing.assert_allclose(merged[1, [0, 2, 3, 4]], weights[1:4][:, [0, 4, 5, 6]].mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(merged, clark_word_word_attention(weights, [list(range(*s)) for s in words.spans]),
                               rtol=1e-5, atol=1e-7)


def test_the_tokenizers_words_keep_specials_and_sentences_apart(bundled):
    encoding = encode(bundled, "unbelievable photosynthesis", "photosynthesis", layers=())
    words = text_words(encoding, False)
    assert words.labels == ("[CLS]", "unbelievable", "photosynthesis", "[SEP]", "photosynthesis", "[SEP]")
    assert words.token_type_ids == (0, 0, 0, 0, 1, 1)
    assert words.sinks == (True, False, False, True, False, True)


def test_each_token_its_own_word_when_asked(bundled):
    encoding = encode(bundled, SPLIT_TEXT, layers=())
    words = text_words(encoding, False, whole=False)
    assert words.labels == encoding.tokens[0] and len(words) == encoding.num_tokens


def test_the_tokens_alone_give_the_same_words_as_the_tokenizer_for_wordpieces(bundled):
    encoding = encode(bundled, "unbelievably serendipitous xylophonists", "photosynthesis", layers=())
    read_off = spans_from_tokens(encoding.tokens[0], encoding.special_tokens_mask[0], False,
                                 encoding.token_type_ids[0])
    assert read_off == spans_from_word_ids(encoding.word_ids[0], encoding.token_type_ids[0])


def test_byte_level_pieces_join_into_words(tiny_gpt2_model):
    encoding = encode(tiny_gpt2_model, "the cat sat on the mat")
    assert encoding.tokens[0] == ("t", "he", "␣cat", "␣sat", "␣on", "␣the", "␣m", "at")
    words = text_words(encoding, tiny_gpt2_model.family.byte_level)
    assert words.labels == ("the", "␣cat", "␣sat", "␣on", "␣the", "␣mat")
    assert words.sinks == (True, False, False, False, False, False)  # GPT-2's sink, its first token, is in "the"
    assert spans_from_tokens(encoding.tokens[0], encoding.special_tokens_mask[0], True) == words.spans
    weights = build_trace(tiny_gpt2_model, encoding, TraceSettings(layer=1, head=2))["weights"][0]  # (T, T) causal
    merged = merge_weights(weights, words.spans)
    np.testing.assert_allclose(merged.sum(axis=-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(merged, clark_word_word_attention(weights, [list(range(*s)) for s in words.spans]),
                               rtol=1e-5, atol=1e-7)
    assert merged[0, 1:].max() == 0.0  # causal: the first word looks at no later word, even averaged over "t he"


def test_byte_level_words_read_off_tokens_stop_at_blanks_and_punctuation():
    tokens = ("t", "he", "␣m", "at", ",", "↵", "he", "ll", "o", "␣", "␣x")
    spans = spans_from_tokens(tokens, [False] * len(tokens), True)
    assert [word_label(tokens[a:b], True) for a, b in spans] == ["the", "␣mat", ",", "↵", "hello", "␣", "␣x"]


def test_wordpieces_read_off_tokens_join_and_specials_stay_alone():
    tokens = ("[CLS]", "play", "##ing", "##s", "[SEP]", "##x", "[SEP]")
    special = [True, False, False, False, True, False, True]
    spans = spans_from_tokens(tokens, special, False)
    assert [word_label(tokens[a:b], False) for a, b in spans] == ["[CLS]", "playings", "[SEP]", "##x", "[SEP]"]
