"""Checkpoints the tests and the benchmarks build for themselves, offline: the Hugging Face Hub cannot be reached.

tiny_gpt2 is a real GPT-2 checkpoint in every way but its size and training: a GPT2LMHeadModel with random
weights (its LM head tied to the word embeddings, as gpt2's is) and a byte-level BPE tokenizer trained here, on
the sentences below, with the `tokenizers` package. Folders saved by it load as `gpt2` from the Hub would.
"""

from __future__ import annotations

from pathlib import Path

END_OF_TEXT = "<|endoftext|>"
# What the tokenizer learns its merges from: the page's examples and a few more, so that their common words are
# one token each and the rest falls apart into pieces, down to single bytes, as a real vocabulary does with rare words.
SENTENCES = (
    "time flies like an arrow",
    "fruit flies like a banana",
    "the cat sat on the mat",
    "the animal didn't cross the street because it was too tired",
    "the animal didn't cross the street because it was too wide",
    "I am looking for a hot job",
    "let's tokenize something?",
    "what if it rains tomorrow",
    "the quick brown fox jumps over the lazy dog",
    "a head that copies the token after the last time it saw this one",
    "Harry Potter and Hermione Granger went to the library, and Harry Potter read a book",
)


def tiny_gpt2(folder: str | Path, *, n_layer: int = 2, n_head: int = 4, n_embd: int = 32, n_positions: int = 128,
              seed: int = 0) -> Path:
    """Save a small GPT-2 with random weights and a byte-level BPE tokenizer trained on SENTENCES in folder."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    trained = ByteLevelBPETokenizer()
    trained.train_from_iterator(list(SENTENCES) * 4, vocab_size=400, min_frequency=2, special_tokens=[END_OF_TEXT],
                                show_progress=False)
    # Wrapped as the tokenizer object itself: built from a saved vocab.json and merges.txt instead, the fast
    # tokenizer encoded every text to nothing.
    tokenizer = GPT2TokenizerFast(tokenizer_object=trained._tokenizer, bos_token=END_OF_TEXT, eos_token=END_OF_TEXT,
                                  unk_token=END_OF_TEXT)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=n_positions, n_embd=n_embd, n_layer=n_layer,
                        n_head=n_head, bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    with torch.random.fork_rng():  # the weights come from the seed, and the caller's random state is left as it was
        torch.manual_seed(seed)
        model = GPT2LMHeadModel(config)
    folder = Path(folder)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
