"""A checkpoint's tokenizer as the core uses it: a text (or a sentence pair) -> token ids, segment ids, which
tokens are special, and the word and the characters each token comes from.

It is the `tokenizers` library's Tokenizer read from the checkpoint's tokenizer.json: the object transformers'
fast tokenizers wrap, without importing transformers (about 2 s, which a new server's first heatmap waited
on). A checkpoint written in an older form (BERT's vocab.txt, GPT-2's vocab.json and merges.txt) has no
tokenizer.json: transformers converts it once, and the Tokenizer it converts to is used the same way.
tests/core/test_tokenizer.py checks that both give transformers' own ids, masks, words and offsets.

Shapes: B batch, T tokens (the longest row; shorter rows padded on the right).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import tokenizers

if TYPE_CHECKING:
    import torch

# The files beside tokenizer.json that name its special tokens, the later one winning, as transformers reads them.
SPECIALS_FILES = ("special_tokens_map.json", "tokenizer_config.json")


@dataclass(frozen=True)
class Batch:
    """Texts tokenized and padded on the right to one length, as numpy arrays."""

    input_ids: np.ndarray  # (B, T) int64
    token_type_ids: np.ndarray  # (B, T) int64: 0 for sentence A, 1 for sentence B
    attention_mask: np.ndarray  # (B, T) int64: 1 for a token, 0 for padding
    special_tokens_mask: np.ndarray  # (B, T) bool: the tokenizer's own ([CLS], [SEP]) and the padding
    word_ids: np.ndarray  # (B, T) int64: the word of each token (counted anew in sentence B), -1 for none

    @classmethod
    def of(cls, encodings: Sequence[tokenizers.Encoding]) -> Batch:
        return cls(
            input_ids=np.array([e.ids for e in encodings], dtype=np.int64),
            token_type_ids=np.array([e.type_ids for e in encodings], dtype=np.int64),
            attention_mask=np.array([e.attention_mask for e in encodings], dtype=np.int64),
            special_tokens_mask=np.array([e.special_tokens_mask for e in encodings], dtype=bool),
            word_ids=np.array([[-1 if word is None else word for word in e.word_ids] for e in encodings],
                              dtype=np.int64),
        )

    def tensors(self) -> dict[str, torch.Tensor]:
        """{"input_ids", "token_type_ids", "attention_mask"}: (B, T) int64 tensors sharing the arrays' memory."""
        import torch

        return {name: torch.from_numpy(getattr(self, name))
                for name in ("input_ids", "token_type_ids", "attention_mask")}


class Tokenizer:
    """One checkpoint's tokenizer. Safe to share between threads: the Tokenizer objects it holds are never
    changed after they are made (transformers sets truncation on its one object at every call)."""

    def __init__(self, whole: tokenizers.Tokenizer, specials: Mapping[str, str]):
        whole.no_truncation()  # a tokenizer.json may come with its trainer's limits (all-MiniLM's: 128 tokens)
        whole.no_padding()
        self._whole = whole
        self._cut: dict[int, tokenizers.Tokenizer] = {}  # max_tokens -> a copy that cuts there
        self._lock = threading.Lock()
        self.mask_token = specials.get("mask_token")
        self.mask_token_id = self._id(self.mask_token)
        # A tokenizer without a padding token (GPT-2's) pads with its end of text; the padding is masked out.
        self.pad_token = specials.get("pad_token") or specials.get("eos_token")
        self.pad_token_id = self._id(self.pad_token) or 0
        self.special_ids = frozenset(index for index, token in whole.get_added_tokens_decoder().items()
                                     if token.special)

    @property
    def vocabulary_size(self) -> int:
        return self._whole.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str, text_b: str | None = None, max_tokens: int | None = None) -> tokenizers.Encoding:
        """A text (or a pair) with its special tokens; with max_tokens, cut to that many, the longer text first."""
        return self._tokenizer(max_tokens).encode(text, text_b)

    def batch(self, pairs: Sequence[tuple[str, str | None]], max_tokens: int | None = None) -> Batch:
        """Texts (or pairs, text_b None for a single text) encoded as encode() does, padded to the longest."""
        encodings = self._tokenizer(max_tokens).encode_batch([a if b is None else (a, b) for a, b in pairs])
        width = max(len(encoding) for encoding in encodings)
        for encoding in encodings:
            encoding.pad(width, pad_id=self.pad_token_id, pad_token=self.pad_token or "")
        return Batch.of(encodings)

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """The vocabulary's token of each id."""
        return [self._whole.id_to_token(int(index)) for index in ids]

    def _id(self, token: str | None) -> int | None:
        return None if token is None else self._whole.token_to_id(token)

    def _tokenizer(self, max_tokens: int | None) -> tokenizers.Tokenizer:
        if max_tokens is None:
            return self._whole
        with self._lock:
            if max_tokens not in self._cut:
                cut = tokenizers.Tokenizer.from_str(self._whole.to_str())
                cut.enable_truncation(max_tokens, strategy="longest_first")
                self._cut[max_tokens] = cut
            return self._cut[max_tokens]


def load_tokenizer(folder: Path, source: str | Path, cache_only: bool, defaults: Mapping[str, str]) -> Tokenizer:
    """The tokenizer of the checkpoint whose files are in folder: its tokenizer.json, else the older form that
    transformers converts (loaded from source, the cache alone when cache_only). defaults: the family's special
    tokens where the checkpoint names none (transformers' class defaults). OSError when it has no tokenizer."""
    specials = {**defaults, **_named_specials(folder)}
    if (folder / "tokenizer.json").is_file():
        whole = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    else:
        from transformers import AutoTokenizer

        converted = AutoTokenizer.from_pretrained(source, local_files_only=cache_only)
        whole = converted.backend_tokenizer
        specials.update(converted.special_tokens_map)
    if whole.get_vocab_size() < 2:  # transformers 5 makes an empty tokenizer when the files are missing
        raise OSError("it holds no tokenizer files (vocab.txt, vocab.json and merges.txt, or tokenizer.json)")
    return Tokenizer(whole, specials)


def _named_specials(folder: Path) -> dict[str, str]:
    """{"mask_token": "[MASK]", …} as the folder's special_tokens_map.json and tokenizer_config.json name them."""
    named = {}
    for file in SPECIALS_FILES:
        if (folder / file).is_file():
            for key, value in json.loads((folder / file).read_text()).items():
                if key.endswith("_token") and isinstance(value, dict):  # an AddedToken written out
                    value = value.get("content")
                if key.endswith("_token") and isinstance(value, str):
                    named[key] = value
    return named
