"""The core's tokenizer (attention/models/tokenizer.py) against transformers' own, on the checkpoints the app reads:
the same ids, segments, special tokens, words, offsets and padding, from tokenizer.json or from the older forms
that transformers converts."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import tokenizers

from attention.models.loading import bundled_model_path, load_model
from harness.reference import transformers_tokenizer

TEXTS = [
    "The cat sat on the mat.",
    "Ça va? Naïve café, RÉSUMÉ!",
    "Hello 世界 مرحبا 👋 I love 😀 and 你好 ok",
    "tab\tnew\nline\x00nul   spaces",
    "unbelievably uncharacteristically antidisestablishmentarianism",
    "word " * 300,
]
PAIRS = [(TEXTS[0], "It was too tired."), (TEXTS[2], TEXTS[1]), ("word " * 40, "short"), ("short", "word " * 40)]
LIMIT = 48  # tokens: the long texts and pairs are cut, the pairs longest first


@pytest.fixture(scope="module", params=["bert tokenizer.json", "bert vocab.txt", "gpt2 tokenizer.json",
                                        "gpt2 vocab.json and merges.txt"])
def loaded(request, tmp_path_factory, tiny_gpt2_checkpoint):
    family, form = request.param.split(" ", 1)
    source = bundled_model_path() if family == "bert" else tiny_gpt2_checkpoint
    if form.startswith("tokenizer.json"):
        return load_model(str(source))
    folder = tmp_path_factory.mktemp(request.param.replace(" ", "-"))
    shutil.copytree(source, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("tokenizer.json"))
    return load_model(str(folder))


def test_each_text_and_pair_gives_transformers_ids_segments_specials_words_and_offsets(loaded):
    reference = transformers_tokenizer(loaded)
    pairs = [(text, None) for text in TEXTS] + (PAIRS if loaded.family.reads_pairs else [])
    for text, text_b in pairs:
        for limit in (None, LIMIT):
            ours = loaded.tokenizer.encode(text, text_b, limit)
            theirs = reference(text, text_b, truncation=limit is not None, max_length=limit,
                               return_special_tokens_mask=True, return_offsets_mapping=True,
                               return_token_type_ids=True)
            assert ours.ids == theirs["input_ids"], (text, text_b, limit)
            assert ours.type_ids == theirs["token_type_ids"]
            assert ours.special_tokens_mask == theirs["special_tokens_mask"]
            assert ours.offsets == [tuple(offset) for offset in theirs["offset_mapping"]]
            assert ours.word_ids == theirs.word_ids()
            assert ours.sequence_ids == theirs.sequence_ids()
            assert loaded.tokenizer.tokens(ours.ids) == reference.convert_ids_to_tokens(theirs["input_ids"])


def test_a_batch_is_padded_on_the_right_as_transformers_pads_it(loaded):
    reference = transformers_tokenizer(loaded)
    texts = [TEXTS[0], TEXTS[2], "Hi"]
    ours = loaded.tokenizer.batch([(text, None) for text in texts], LIMIT)
    theirs = reference(texts, padding=True, truncation=True, max_length=LIMIT, return_special_tokens_mask=True,
                       return_token_type_ids=True, return_tensors="np")
    np.testing.assert_array_equal(ours.input_ids, theirs["input_ids"])
    np.testing.assert_array_equal(ours.token_type_ids, theirs["token_type_ids"])
    np.testing.assert_array_equal(ours.attention_mask, theirs["attention_mask"])
    np.testing.assert_array_equal(ours.special_tokens_mask, theirs["special_tokens_mask"].astype(bool))
    assert ours.attention_mask.min() == 0, "the batch has padding"
    words = [[-1 if word is None else word for word in theirs.word_ids(row)] for row in range(len(texts))]
    np.testing.assert_array_equal(ours.word_ids, words)


def test_the_special_tokens_are_transformers_own(loaded):
    reference = transformers_tokenizer(loaded)
    assert loaded.tokenizer.special_ids == set(reference.all_special_ids)
    assert (loaded.tokenizer.pad_token, loaded.tokenizer.pad_token_id) == (reference.pad_token,
                                                                            reference.pad_token_id)
    assert (loaded.tokenizer.mask_token, loaded.tokenizer.mask_token_id) == (reference.mask_token,
                                                                              reference.mask_token_id)
    assert loaded.tokenizer.vocabulary_size == len(reference)


def test_a_tokenizer_json_written_with_a_trainers_limits_cuts_nothing_it_was_not_asked_to(bundled):
    written = tokenizers.Tokenizer.from_file(str(bundled_model_path() / "tokenizer.json"))
    assert written.truncation["max_length"] == 128 and written.padding["length"] == 128
    assert len(bundled.tokenizer.encode("word " * 300)) == 302
    assert len(bundled.tokenizer.batch([("word " * 300, None), ("Hi", None)]).input_ids[1]) == 302
