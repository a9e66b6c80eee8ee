"""Text -> token ids -> the hidden states of every layer, computed once per text.

Letters used in shape comments: B batch, T tokens, C hidden size, L layers.
Everything returned is numpy, so that callers can cache it and never hold torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attention.models import LoadedModel


@dataclass(frozen=True, eq=False)
class Encoding:
    """A batch of texts as the model saw them, with every layer's input kept."""

    tokens: tuple[tuple[str, ...], ...]  # per batch row, padding included
    input_ids: np.ndarray  # (B, T) int64
    token_type_ids: np.ndarray  # (B, T) int64: 0 for sentence A, 1 for sentence B
    attention_mask: np.ndarray  # (B, T) int64: 1 for a real token, 0 for padding
    special_tokens_mask: np.ndarray  # (B, T) bool: [CLS], [SEP], [PAD]
    hidden_states: tuple[np.ndarray, ...]  # L + 1 arrays of (B, T, C): embeddings, then each layer's output
    dropped_tokens: tuple[int, ...]  # per batch row: tokens cut off beyond the model's limit

    @property
    def num_tokens(self) -> int:
        return self.input_ids.shape[1]


def encode(loaded: LoadedModel, text: str, text_b: str | None = None) -> Encoding:
    """One text (or a sentence pair) run through the model once."""
    return encode_batch(loaded, [(text, text_b)])


def encode_batch(loaded: LoadedModel, pairs: list[tuple[str, str | None]]) -> Encoding:
    """Several texts padded to one length, as a batch the model runs at once."""
    if not pairs:
        raise ValueError("encode_batch needs at least one (text, text_b) pair")
    texts = [_require_text(a, "text") for a, _ in pairs]
    texts_b = [None if not b or not b.strip() else b for _, b in pairs]
    tokenizer = loaded.tokenizer
    batch = _tokenize(tokenizer, texts, texts_b, loaded.max_tokens)
    # Only a row that reached the limit can have lost tokens; only then is it tokenized again, uncut.
    dropped = tuple(
        max(0, _untruncated_length(tokenizer, a, b) - int(kept)) if int(kept) >= loaded.max_tokens else 0
        for a, b, kept in zip(texts, texts_b, batch["attention_mask"].sum(dim=1), strict=True)
    )
    with torch.inference_mode():
        outputs = loaded.model(
            input_ids=batch["input_ids"],
            token_type_ids=batch["token_type_ids"],
            attention_mask=batch["attention_mask"],
            output_hidden_states=True,
        )
    return Encoding(
        tokens=tuple(tuple(tokenizer.convert_ids_to_tokens(row)) for row in batch["input_ids"].tolist()),
        input_ids=batch["input_ids"].numpy(),
        token_type_ids=batch["token_type_ids"].numpy(),
        attention_mask=batch["attention_mask"].numpy(),
        special_tokens_mask=batch["special_tokens_mask"].numpy().astype(bool),
        hidden_states=tuple(h.numpy() for h in outputs.hidden_states),  # L + 1 x (B, T, C)
        dropped_tokens=dropped,
    )


def _require_text(text: object, name: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} must be a non-empty string with at least one character that is not a space")
    return text


def _tokenize(tokenizer, texts, texts_b, max_tokens):
    has_pair = any(b is not None for b in texts_b)
    kwargs = dict(
        padding=True,
        truncation="longest_first" if has_pair else True,
        max_length=max_tokens,
        return_tensors="pt",
        return_special_tokens_mask=True,
        return_token_type_ids=True,
    )
    if not has_pair:
        return tokenizer(texts, **kwargs)
    # A batch mixing single texts and pairs: tokenize row by row, then pad together.
    rows = [tokenizer(a, b, truncation=kwargs["truncation"], max_length=max_tokens,
                      return_special_tokens_mask=True, return_token_type_ids=True)
            for a, b in zip(texts, texts_b, strict=True)]
    return tokenizer.pad(rows, padding=True, return_tensors="pt")


def _untruncated_length(tokenizer, text: str, text_b: str | None) -> int:
    """How many tokens the text would have with no limit (specials included)."""
    ids = tokenizer(text, text_b, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    return len(ids)
