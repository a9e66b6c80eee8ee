"""Text -> token ids -> the hidden states of every layer, computed once per text.

An encoding may keep only some layers' hidden states (Encoding.keeping, or encode(..., layers=)): a trace
of layer ℓ reads the input of layer ℓ alone, a 13th of a bert-base forward pass's 20 MB at 512 tokens.
With layers=() the model is not run at all: the tokens, ids and masks only.

Letters used in shape comments: B batch, T tokens, C hidden size, L layers.
Everything returned is numpy, so that callers can cache it and never hold torch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from attention.models.loading import LoadedModel


@dataclass(frozen=True, eq=False)
class Encoding:
    """A batch of texts as the model saw them, with every layer's input kept."""

    tokens: tuple[tuple[str, ...], ...]  # per batch row, padding included
    input_ids: np.ndarray  # (B, T) int64
    token_type_ids: np.ndarray  # (B, T) int64: 0 for sentence A, 1 for sentence B
    attention_mask: np.ndarray  # (B, T) int64: 1 for a real token, 0 for padding
    special_tokens_mask: np.ndarray  # (B, T) bool: [CLS], [SEP], [PAD]
    sinks: np.ndarray  # (B, T) bool: where the family's heads park spare attention ([CLS] and [SEP]; GPT-2's first)
    # L + 1 arrays of (B, T, C): embeddings, then each layer's output (element ℓ < L is layer ℓ's input, which is
    # all that is read; GPT-2's last has ln_f applied); None for a layer not kept
    hidden_states: tuple[np.ndarray | None, ...]
    dropped_tokens: tuple[int, ...]  # per batch row: tokens cut off beyond the model's limit
    # (B, T) int64: the tokenizer's own word of each token (counted anew in sentence B), -1 for a special token or
    # padding; None when the tokenizer tells no words (a slow one): attention/text/words.py then reads them off the
    # tokens
    word_ids: np.ndarray | None = None

    @property
    def num_tokens(self) -> int:
        return self.input_ids.shape[1]

    def layer_input(self, layer: int) -> np.ndarray:
        """(B, T, C) what layer `layer` reads: the embeddings for layer 0, else the output of the layer before."""
        if not 0 <= layer < len(self.hidden_states):
            raise ValueError(f"layer must be from 0 to {len(self.hidden_states) - 1}; got {layer}")
        hidden = self.hidden_states[layer]
        if hidden is None:
            kept = [index for index, kept in enumerate(self.hidden_states) if kept is not None]
            raise ValueError(f"this encoding keeps the input of layers {kept} only, not of layer {layer}")
        return hidden

    def keeping(self, layers: Iterable[int]) -> Encoding:
        """The same encoding with only the inputs of the given layers kept (the others None)."""
        wanted = set(layers)
        for layer in wanted:
            self.layer_input(layer)  # ValueError for a layer that is not here to keep
        return dataclasses.replace(self, hidden_states=tuple(
            hidden if index in wanted else None for index, hidden in enumerate(self.hidden_states)))


def encode(loaded: LoadedModel, text: str, text_b: str | None = None, layers: Iterable[int] | None = None
           ) -> Encoding:
    """One text (or a sentence pair) run through the model once; layers: the inputs to keep (default all)."""
    return encode_batch(loaded, [(text, text_b)], layers)


def encode_batch(loaded: LoadedModel, pairs: list[tuple[str, str | None]], layers: Iterable[int] | None = None
                 ) -> Encoding:
    """Several texts padded to one length, as a batch the model runs at once; layers: the inputs to keep
    (default every layer's; () runs no model at all)."""
    if not pairs:
        raise ValueError("encode_batch needs at least one (text, text_b) pair")
    texts = [_require_text(a, "text") for a, _ in pairs]
    texts_b = [None if not b or not b.strip() else b for _, b in pairs]
    family = loaded.family
    if not family.reads_pairs and any(b is not None for b in texts_b):
        raise ValueError(f"{family.label} reads one text: a sentence pair (A [SEP] B, with segment ids) is BERT's. "
                         "Leave the second sentence empty.")
    tokenizer = loaded.tokenizer
    batch = tokenizer.batch(list(zip(texts, texts_b, strict=True)), loaded.max_tokens)
    # Only a row that reached the limit can have lost tokens; only then is it tokenized again, uncut.
    dropped = tuple(
        max(0, len(tokenizer.encode(a, b)) - int(kept)) if int(kept) >= loaded.max_tokens else 0
        for a, b, kept in zip(texts, texts_b, batch.attention_mask.sum(axis=1), strict=True)
    )
    kept = range(loaded.shape.num_layers + 1) if layers is None else sorted(set(layers))
    hidden_states = [None] * (loaded.shape.num_layers + 1)
    if kept:
        with torch.inference_mode():
            outputs = family.forward(loaded.model, **batch.tensors())  # L + 1 x (B, T, C)
        for layer in kept:
            hidden_states[layer] = outputs[layer].numpy()  # (B, T, C)
    return Encoding(
        tokens=tuple(family.readable(tokenizer.tokens(row)) for row in batch.input_ids.tolist()),
        input_ids=batch.input_ids,
        token_type_ids=batch.token_type_ids,
        attention_mask=batch.attention_mask,
        special_tokens_mask=batch.special_tokens_mask,
        sinks=family.sinks(batch.special_tokens_mask, batch.attention_mask),
        hidden_states=tuple(hidden_states),  # L + 1 x (B, T, C) or None
        dropped_tokens=dropped,
        word_ids=batch.word_ids,
    )


def _require_text(text: object, name: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} must be a non-empty string with at least one character that is not a space")
    return text
