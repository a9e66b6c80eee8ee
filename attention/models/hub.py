"""Which files of a Hugging Face Hub repository the app uses, and whether the local cache holds them.

attention.models.loading reads a downloaded model from the cache alone and attention.models.download fetches it; both
need to know what "downloaded" means, so it is said once, here, and neither imports the other for it.
huggingface_hub is imported inside the functions: the page's first paint does not wait for it.
"""

from __future__ import annotations

from pathlib import Path

WEIGHTS = "model.safetensors"
# The ways a tokenizer is written down; it needs all the files of one of them. tokenizer.json is the whole
# tokenizer; the older forms are BERT's WordPiece vocab.txt and GPT-2's byte-level BPE in vocab.json and merges.txt.
VOCABULARIES = (("tokenizer.json",), ("vocab.txt",), ("vocab.json", "merges.txt"))
# All a BertModel or GPT2Model and its tokenizer read, and nothing else: never pytorch_model.bin, TensorFlow,
# Flax, Rust, ONNX or TFLite copies, which would double or triple the download, nor generation_config.json
# (the page never generates). A file the repository lacks is skipped unless required.
FILES = ("config.json", "tokenizer_config.json", "special_tokens_map.json",
         *(file for vocabulary in VOCABULARIES for file in vocabulary), WEIGHTS)
REQUIRED = ("config.json", WEIGHTS)


def in_cache(name: str, file: str, *, cache_dir: str | Path | None = None, revision: str | None = None) -> bool:
    """Whether one file of a Hub repository is complete in the cache (at revision; default the main branch)."""
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(name, file, cache_dir=cache_dir, revision=revision), str)


def is_cached(name: str, *, cache_dir: str | Path | None = None) -> bool:
    """Whether the cache already holds a Hub model's config, weights and vocabulary, so nothing must be fetched."""
    return (all(in_cache(name, file, cache_dir=cache_dir) for file in REQUIRED)
            and any(all(in_cache(name, file, cache_dir=cache_dir) for file in vocabulary)
                    for vocabulary in VOCABULARIES))
