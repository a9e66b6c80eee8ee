"""Switching heads off in a sentence-embedding model: how far the sentence's embedding moves, and how the
cosine similarity of two sentences changes.

all-MiniLM-L6-v2 was trained for this job, not to guess masked words: sentence-transformers reads the
encoder's last hidden states, takes their mean over the tokens (padding left out, [CLS] and [SEP] in)
and scales the mean to length 1. Two sentences are as alike as the dot product of their embeddings.
Heads are switched off as in attention.experiments.head_switch (their context set to zero before W_o), with the
model's own modules run layer by layer and nothing in the shared model changed.

The two sentences run packed: their tokens one after the other in one row, each looking at its own only
(attention.stages.masks), not padded to the longer one in a batch of two. A page's sentence of 32 tokens beside the
default second one of 6 is then 38 rows through every layer, not 64: a toggle's pass costs a quarter less.

Letters used in shape comments: B batch, T tokens, N the tokens of both sentences, C hidden size, nh heads,
L layers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from attention.experiments.head_switch import (
    HeadsOff,
    embed,
    last_output_with_heads_off,
    layers_with_heads_off,
    normalise_heads_off,
)
from attention.models.loading import LoadedModel

# sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (sentence_bert_config.json): it cuts longer texts here.
MAX_SENTENCE_TOKENS = 256
# The second sentence when none is typed: close in meaning to the page's default text, in other words.
DEFAULT_SECOND = "the years pass quickly"


@dataclass(frozen=True)
class EmbeddingRun:
    """Two sentences' embeddings with some heads off, and how alike they are."""

    heads_off: HeadsOff
    tokens: tuple[tuple[str, ...], tuple[str, ...]]  # each sentence as the model read it, [CLS] … [SEP]
    embeddings: np.ndarray  # (2, C) mean over the tokens, length 1
    similarity: float  # cos(A, B): the dot product of the two embeddings


@dataclass(frozen=True)
class EmbeddingEffect:
    """What switching one head off (alone) does to the two embeddings."""

    layer: int
    head: int
    moved: float  # 1 − cos(A intact, A with this head off): 0 when sentence A's embedding did not move
    similarity: float  # cos(A, B) with this head off
    change: float  # similarity − the intact similarity


def sentence_embeddings(loaded: LoadedModel, sentences: Iterable[str], heads_off: Iterable[tuple[int, int]] = (),
                        intact_inputs: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
    """(B, C): each sentence's embedding (mean pooling, then length 1) with the given heads switched off.

    intact_inputs: the same sentences' layer_inputs, when kept. The layers before the first one with a head off read
    what they read in the intact model, so the pass starts there, from the kept input, and runs the rest only.
    """
    sentences = tuple(sentences)
    batch = _encode(loaded, sentences)
    segments = packed_segments(batch["attention_mask"])  # (1, N)
    off = normalise_heads_off(heads_off, loaded.shape)
    first = 0 if intact_inputs is None else min((layer for layer, _ in off), default=loaded.shape.num_layers)
    with torch.inference_mode():
        hidden = (_packed_embeddings(loaded, batch) if intact_inputs is None
                  else torch.from_numpy(intact_inputs[first]))  # (1, N, C)
        last = last_output_with_heads_off(loaded, hidden, segments, _keep(1, loaded.shape, off), start=first)
        return mean_pooled(last, segments, len(sentences))[0].numpy()  # (B, C)


def layer_inputs(loaded: LoadedModel, text: str, second: str) -> tuple[np.ndarray, ...]:
    """L + 1 x (1, N, C): what each layer of the intact model reads from the two sentences, packed, then the last
    layer's output: kept by the page, so that a toggle in layer l runs layers l… only."""
    batch = _encode(loaded, (text, second))
    with torch.inference_mode():
        embeddings = _packed_embeddings(loaded, batch)  # (1, N, C)
        intact = _keep(1, loaded.shape, ())  # (1, L, nh): every head on
        hidden_states, _ = layers_with_heads_off(loaded, embeddings, packed_segments(batch["attention_mask"]), intact,
                                                 start=0)
    return tuple(h.numpy() for h in (embeddings, *hidden_states))


def compare(loaded: LoadedModel, text: str, second: str, heads_off: Iterable[tuple[int, int]] = (),
            intact_inputs: tuple[np.ndarray, ...] | None = None) -> EmbeddingRun:
    """The two sentences' embeddings and their cosine similarity, with the given heads switched off (from the
    pair's kept layer_inputs, when given)."""
    off = normalise_heads_off(heads_off, loaded.shape)
    embeddings = sentence_embeddings(loaded, (text, second), off, intact_inputs)  # (2, C)
    return EmbeddingRun(heads_off=off, tokens=(_tokens(loaded, text), _tokens(loaded, second)),
                        embeddings=embeddings, similarity=float(embeddings[0] @ embeddings[1]))


def head_ranking(loaded: LoadedModel, text: str, second: str, intact_inputs: tuple[np.ndarray, ...] | None = None,
                 ) -> tuple[EmbeddingRun, tuple[EmbeddingEffect, ...]]:
    """The intact run, and every head switched off alone, the one that moves sentence A's embedding most first.

    The heads of one layer run as one batch (nh copies of the packed pair), from that layer's unchanged input on:
    intact_inputs, the pair's layer_inputs when the page keeps them, else made here.
    """
    shape = loaded.shape
    kept = layer_inputs(loaded, text, second) if intact_inputs is None else intact_inputs  # L + 1 x (1, N, C)
    intact = compare(loaded, text, second, intact_inputs=kept)  # no head off: the last layer's output, pooled
    segments = packed_segments(_encode(loaded, (text, second))["attention_mask"]).repeat(shape.num_heads, 1)  # (nh, N)
    effects = []
    with torch.inference_mode():
        intact_a = torch.from_numpy(intact.embeddings[0])  # (C,)
        for layer in range(shape.num_layers):
            keep = torch.ones(shape.num_heads, shape.num_layers, shape.num_heads)  # (nh, L, nh)
            keep[torch.arange(shape.num_heads), layer, torch.arange(shape.num_heads)] = 0.0  # copy h: head h off
            start = torch.from_numpy(kept[layer]).repeat(shape.num_heads, 1, 1)  # (nh, N, C)
            last = last_output_with_heads_off(loaded, start, segments, keep, start=layer)  # (nh, N, C)
            pooled = mean_pooled(last, segments, 2)  # (nh, 2, C)
            similarities = (pooled[:, 0] * pooled[:, 1]).sum(-1)  # (nh,)
            moved = 1.0 - pooled[:, 0] @ intact_a  # (nh,)
            effects += [EmbeddingEffect(layer, head, float(moved[head]), float(similarities[head]),
                                        float(similarities[head]) - intact.similarity)
                        for head in range(shape.num_heads)]
    return intact, tuple(sorted(effects, key=lambda e: (-e.moved, e.layer, e.head)))


def moved_grid(effects: Iterable[EmbeddingEffect], num_layers: int, num_heads: int) -> np.ndarray:
    """(L, nh): how far sentence A's embedding moves (1 − cos) when that head alone is off."""
    grid = np.zeros((num_layers, num_heads), dtype=np.float32)
    for effect in effects:
        grid[effect.layer, effect.head] = effect.moved
    return grid


def packed_segments(attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, T) padded batch -> (1, N): which sentence (1…B) each of their N tokens is, in the order pack keeps them."""
    sentence = torch.arange(1, attention_mask.shape[0] + 1)[:, None] * attention_mask  # (B, T): 0 for padding
    return sentence[attention_mask.to(torch.bool)][None]  # (1, N)


def pack(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, T, C) padded batch -> (1, N, C): the sentences' token vectors one after the other, padding left out."""
    return hidden[attention_mask.to(torch.bool)][None]  # (1, N, C)


def mean_pooled(hidden: torch.Tensor, segments: torch.Tensor, count: int) -> torch.Tensor:
    """(R, N, C), (R, N) -> (R, count, C): in each row, the mean of each sentence's token vectors (sentences
    1…count, packed_segments' numbers), scaled to length 1 (sentence-transformers' Pooling(mean) then Normalize)."""
    member = (segments[..., None] == torch.arange(1, count + 1)).to(hidden.dtype)  # (R, N, count)
    sums = member.transpose(1, 2) @ hidden  # (R, count, C)
    means = sums / member.sum(dim=1)[..., None].clamp(min=1e-9)  # (R, count, C)
    return F.normalize(means, p=2, dim=-1)  # (R, count, C)


def _keep(batch: int, shape, heads_off: HeadsOff) -> torch.Tensor:
    keep = torch.ones(batch, shape.num_layers, shape.num_heads)  # (B, L, nh)
    for layer, head in heads_off:
        keep[:, layer, head] = 0.0
    return keep


def _packed_embeddings(loaded: LoadedModel, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """(1, N, C): the embeddings the first layer reads, each sentence's positions from 0, packed."""
    return pack(embed(loaded, batch["input_ids"], batch["token_type_ids"]), batch["attention_mask"])  # (1, N, C)


def _encode(loaded: LoadedModel, sentences: Iterable[str]) -> dict[str, torch.Tensor]:
    sentences = list(sentences)
    if not sentences or any(not isinstance(s, str) or not s.strip() for s in sentences):
        raise ValueError("Type a sentence in each box: an empty one has no embedding to compare.")
    batch = loaded.tokenizer.batch([(sentence, None) for sentence in sentences],
                                   min(MAX_SENTENCE_TOKENS, loaded.max_tokens))
    return batch.tensors()


def _tokens(loaded: LoadedModel, sentence: str) -> tuple[str, ...]:
    ids = _encode(loaded, [sentence])["input_ids"][0].tolist()
    return tuple(loaded.tokenizer.tokens(ids))
