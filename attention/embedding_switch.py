"""Switching heads off in a sentence-embedding model: how far the sentence's embedding moves, and how the
cosine similarity of two sentences changes.

all-MiniLM-L6-v2 was trained for this job, not to guess masked words: sentence-transformers reads the
encoder's last hidden states, takes their mean over the tokens (padding left out, [CLS] and [SEP] in)
and scales the mean to length 1. Two sentences are as alike as the dot product of their embeddings.
Heads are switched off as in attention.head_switch (their context set to zero before W_o), with the
model's own modules run layer by layer and nothing in the shared model changed.

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, L layers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from attention.head_switch import HeadsOff, embed, layers_with_heads_off, normalise_heads_off
from attention.models import LoadedModel

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
    batch = _encode(loaded, sentences)
    off = normalise_heads_off(heads_off, loaded.shape)
    keep = _keep(batch["input_ids"].shape[0], loaded.shape, off)  # (B, L, nh)
    first = 0 if intact_inputs is None else min((layer for layer, _ in off), default=loaded.shape.num_layers)
    with torch.inference_mode():
        if intact_inputs is None:
            hidden = embed(loaded, batch["input_ids"], batch["token_type_ids"])  # (B, T, C)
        else:
            hidden = torch.from_numpy(intact_inputs[first])  # (B, T, C)
        outputs, _ = layers_with_heads_off(loaded, hidden, batch["attention_mask"], keep, start=first)
        return mean_pooled(outputs[-1] if outputs else hidden, batch["attention_mask"]).numpy()  # (B, C)


def layer_inputs(loaded: LoadedModel, text: str, second: str) -> tuple[np.ndarray, ...]:
    """L + 1 x (2, T, C): what each layer of the intact model reads from the two sentences, then the last layer's
    output: kept by the page, so that a toggle in layer l runs layers l… only."""
    batch = _encode(loaded, (text, second))
    with torch.inference_mode():
        embeddings = embed(loaded, batch["input_ids"], batch["token_type_ids"])  # (2, T, C)
        intact = _keep(2, loaded.shape, ())  # (2, L, nh): every head on
        hidden_states, _ = layers_with_heads_off(loaded, embeddings, batch["attention_mask"], intact, start=0)
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

    The heads of one layer run as one batch (nh copies of both sentences), from that layer's unchanged input on:
    intact_inputs, the pair's layer_inputs when the page keeps them, else made here.
    """
    shape = loaded.shape
    kept = layer_inputs(loaded, text, second) if intact_inputs is None else intact_inputs  # L + 1 x (2, T, C)
    intact = compare(loaded, text, second, intact_inputs=kept)  # no head off: the last layer's output, pooled
    pair_mask = _encode(loaded, (text, second))["attention_mask"]  # (2, T)
    mask = pair_mask.repeat(shape.num_heads, 1)  # (nh·2, T): rows 2h, 2h + 1 are A, B
    effects = []
    with torch.inference_mode():
        intact_a = torch.from_numpy(intact.embeddings[0])  # (C,)
        for layer in range(shape.num_layers):
            keep = torch.ones(shape.num_heads, 2, shape.num_layers, shape.num_heads)  # (nh, 2, L, nh)
            keep[torch.arange(shape.num_heads), :, layer, torch.arange(shape.num_heads)] = 0.0  # copy h: head h off
            start = torch.from_numpy(kept[layer]).repeat(shape.num_heads, 1, 1)  # (nh·2, T, C)
            outputs, _ = layers_with_heads_off(loaded, start, mask, keep.flatten(0, 1), start=layer)
            pooled = mean_pooled(outputs[-1], mask).view(shape.num_heads, 2, -1)  # (nh, 2, C)
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


def mean_pooled(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, T, C), (B, T) -> (B, C): the mean of each sentence's token vectors, padding left out, scaled to length 1
    (sentence-transformers' Pooling(mean) then Normalize)."""
    weights = attention_mask[..., None].to(hidden.dtype)  # (B, T, 1)
    means = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)  # (B, C)
    return F.normalize(means, p=2, dim=1)  # (B, C)


def _keep(batch: int, shape, heads_off: HeadsOff) -> torch.Tensor:
    keep = torch.ones(batch, shape.num_layers, shape.num_heads)  # (B, L, nh)
    for layer, head in heads_off:
        keep[:, layer, head] = 0.0
    return keep


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
