"""The tiny GPT-2's tokenizer (harness/checkpoints.py), put together from tokenizers' public parts, is the tokenizer
tokenizers' own ByteLevelBPETokenizer trains on the same sentences: the same vocabulary, the same pieces."""

from __future__ import annotations

from tokenizers import ByteLevelBPETokenizer

from harness.checkpoints import END_OF_TEXT, SENTENCES, VOCABULARY_SIZE, gpt2_tokenizer


def test_the_tiny_gpt2s_tokenizer_is_the_one_byte_level_bpe_trains():
    trained = ByteLevelBPETokenizer()
    trained.train_from_iterator(SENTENCES, vocab_size=VOCABULARY_SIZE, min_frequency=2, special_tokens=[END_OF_TEXT],
                                show_progress=False)
    ours = gpt2_tokenizer()
    assert ours.get_vocab() == trained.get_vocab()
    for text in [*SENTENCES, "A text it never saw: Zürich, 3.14 and émigrés!"]:
        assert ours(text)["input_ids"] == trained.encode(text).ids, text
