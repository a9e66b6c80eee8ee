"""Text -> tokens: known ids, special tokens, sentence pairs, truncation and odd characters."""

from __future__ import annotations

import numpy as np
import pytest

from attention.text.encoding import encode, encode_batch
from harness.reference import transformers_tokenizer

KNOWN_IDS = {
    "I am looking for a hot job": [1045, 2572, 2559, 2005, 1037, 2980, 3105],
    "time flies like an arrow": [2051, 10029, 2066, 2019, 8612],
}
# One word that the bundled vocabulary keeps as a single token, to build texts of an exact length.
ONE_TOKEN_WORD = "word"


def words(count: int) -> str:
    return " ".join([ONE_TOKEN_WORD] * count)


@pytest.mark.parametrize("text", list(KNOWN_IDS))
def test_the_bundled_tokenizer_gives_the_known_ids(bundled, text):
    assert transformers_tokenizer(bundled)(text, add_special_tokens=False)["input_ids"] == KNOWN_IDS[text]


@pytest.mark.parametrize("text", list(KNOWN_IDS))
def test_encode_wraps_the_ids_in_cls_and_sep(bundled, text):
    tokenizer = transformers_tokenizer(bundled)
    encoding = encode(bundled, text)
    ids = KNOWN_IDS[text]
    assert encoding.input_ids.tolist() == [[tokenizer.cls_token_id, *ids, tokenizer.sep_token_id]]
    assert encoding.tokens[0][0] == "[CLS]" and encoding.tokens[0][-1] == "[SEP]"
    assert list(encoding.tokens[0][1:-1]) == tokenizer.convert_ids_to_tokens(ids)
    assert encoding.special_tokens_mask.tolist() == [[True] + [False] * len(ids) + [True]]
    assert encoding.attention_mask.tolist() == [[1] * (len(ids) + 2)]
    assert encoding.token_type_ids.tolist() == [[0] * (len(ids) + 2)]
    assert encoding.dropped_tokens == (0,)
    assert encoding.num_tokens == len(ids) + 2


def test_encoding_keeps_every_layers_hidden_states(bundled):
    encoding = encode(bundled, "time flies like an arrow")
    assert len(encoding.hidden_states) == bundled.shape.num_layers + 1
    assert all(h.shape == (1, 7, bundled.shape.hidden_size) for h in encoding.hidden_states)
    assert encoding.input_ids.dtype == np.int64


def test_an_encoding_can_keep_some_layers_or_none(bundled):
    every = encode(bundled, "time flies like an arrow")
    some = encode(bundled, "time flies like an arrow", layers=[3])
    np.testing.assert_array_equal(some.layer_input(3), every.layer_input(3))
    assert [h is None for h in some.hidden_states] == [layer != 3 for layer in range(7)]
    with pytest.raises(ValueError, match=r"keeps the input of layers \[3\] only, not of layer 2"):
        some.layer_input(2)
    none = encode(bundled, "time flies like an arrow", layers=())
    assert none.hidden_states == (None,) * 7 and none.tokens == every.tokens
    np.testing.assert_array_equal(none.special_tokens_mask, every.special_tokens_mask)
    kept = every.keeping([0, 5])
    np.testing.assert_array_equal(kept.layer_input(5), every.layer_input(5))
    assert kept.hidden_states[1] is None and every.hidden_states[1] is not None, "a copy: the original keeps all"
    with pytest.raises(ValueError, match="layer must be from 0 to 6; got 7"):
        every.layer_input(7)


def test_a_sentence_pair_gets_segment_ids_zero_then_one(bundled):
    a, b = "I am looking for a hot job", "time flies like an arrow"
    encoding = encode(bundled, a, b)
    ids_a, ids_b = KNOWN_IDS[a], KNOWN_IDS[b]
    cls, sep = transformers_tokenizer(bundled).cls_token_id, transformers_tokenizer(bundled).sep_token_id
    assert encoding.input_ids.tolist() == [[cls, *ids_a, sep, *ids_b, sep]]
    assert encoding.token_type_ids.tolist() == [[0] * (len(ids_a) + 2) + [1] * (len(ids_b) + 1)]
    assert encoding.tokens[0].count("[SEP]") == 2


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_a_blank_second_sentence_means_a_single_text(bundled, blank):
    encoding = encode(bundled, "time flies like an arrow", blank)
    assert encoding.token_type_ids.tolist() == [[0] * 7]


def test_a_batch_mixing_pairs_and_single_texts(bundled):
    b = "fruit flies like a banana"
    length_b = len(transformers_tokenizer(bundled)(b, add_special_tokens=False)["input_ids"])
    encoding = encode_batch(bundled, [("time flies like an arrow", b), ("hello", None)])
    assert encoding.attention_mask.sum(axis=1).tolist() == [7 + length_b + 1, 3]
    assert encoding.token_type_ids[0].tolist() == [0] * 7 + [1] * (length_b + 1)
    assert encoding.token_type_ids[1].tolist() == [0] * (7 + length_b + 1)
    assert encoding.tokens[1][:3] == ("[CLS]", "hello", "[SEP]")
    assert set(encoding.tokens[1][3:]) == {"[PAD]"}
    assert encoding.dropped_tokens == (0, 0)


@pytest.mark.parametrize(("count", "dropped"), [(510, 0), (511, 1), (600, 90), (2000, 1490)])
def test_long_texts_are_cut_at_512_and_the_cut_is_counted(bundled, count, dropped):
    assert bundled.max_tokens == 512
    assert len(transformers_tokenizer(bundled)(words(count), add_special_tokens=False)["input_ids"]) == count
    encoding = encode(bundled, words(count))
    assert encoding.num_tokens == min(count + 2, 512)
    assert encoding.tokens[0][-1] == "[SEP]"
    assert encoding.dropped_tokens == (dropped,)


def test_a_long_sentence_pair_counts_what_both_lost(bundled):
    encoding = encode(bundled, words(400), words(300))
    assert encoding.num_tokens == 512
    assert encoding.dropped_tokens == (400 + 300 + 3 - 512,)
    assert encoding.tokens[0].count("[SEP]") == 2
    assert set(encoding.token_type_ids[0].tolist()) == {0, 1}


def test_each_row_of_a_batch_reports_its_own_cut(bundled):
    encoding = encode_batch(bundled, [(words(600), None), ("short text", None), (words(520), None)])
    assert encoding.input_ids.shape == (3, 512)
    assert encoding.dropped_tokens == (90, 0, 10)


@pytest.mark.parametrize(("count", "dropped"), [(62, 0), (63, 1), (100, 38)])
def test_the_tiny_model_cuts_at_64(tiny, count, dropped):
    assert tiny.max_tokens == 64
    encoding = encode(tiny, words(count))
    assert encoding.num_tokens == min(count + 2, 64)
    assert encoding.dropped_tokens == (dropped,)
    assert all(h.shape[1] == encoding.num_tokens for h in encoding.hidden_states)


ODD_TEXTS = {
    "emoji": "I love pizza 🍕🔥 and 🧑🏽‍🚀 rockets",
    "emoji only": "😀🎉",
    "accents": "Crème brûlée à la façon de Ångström, naïve café",
    "cjk": "東京は今日も晴れです。天气很好。",
    "arabic": "مرحبا بالعالم",
    "zero-width inside": "zero\u200bwidth\u200cjoin\u200dand\ufeffbom",
    "combining mark alone": "e\u0301 and \u0301",
    "mixed": "Hello 世界 مرحبا 👋 Ça va?",
    "control characters": "tab\tnew\nline\x00nul",
}


@pytest.mark.parametrize("text", list(ODD_TEXTS.values()), ids=list(ODD_TEXTS))
def test_unusual_characters_never_raise(bundled, text):
    encoding = encode(bundled, text)
    tokens = encoding.tokens[0]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert encoding.input_ids.max() < transformers_tokenizer(bundled).vocab_size
    assert all(np.isfinite(h).all() for h in encoding.hidden_states)


def test_unusual_characters_in_a_sentence_pair_never_raise(bundled):
    encoding = encode(bundled, ODD_TEXTS["cjk"], ODD_TEXTS["emoji"])
    assert encoding.token_type_ids[0, -1] == 1


def test_unknown_characters_become_unk(bundled):
    assert "[UNK]" in encode(bundled, ODD_TEXTS["emoji only"]).tokens[0]


@pytest.mark.parametrize("blank", ["", " ", "\t\n  ", None, 42])
def test_empty_or_blank_text_is_refused(bundled, blank):
    with pytest.raises(ValueError, match="non-empty"):
        encode(bundled, blank)


def test_one_blank_text_in_a_batch_is_refused(bundled):
    with pytest.raises(ValueError, match="non-empty"):
        encode_batch(bundled, [("fine", None), ("  ", None)])
