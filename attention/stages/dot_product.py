"""Scaled dot-product attention from scratch, returning every stage it computed.

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, d head size.
The functions broadcast over any leading dimensions: (B, T, d) for one head,
(B, nh, T, d) for all heads at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

# What transformers adds to the score of a masked key: the most negative float32,
# so that softmax gives it exactly zero weight and a fully masked row stays finite.
MASKED_SCORE = torch.finfo(torch.float32).min
# The functions that go over every head take a few heads at a time, at most this many (T, T) floats at once
# (4 MB each): every stage of a chunk is held until its weights are copied out, so a layer's four stages at
# once cost a 474-token layer of 12 heads 42 MB beside its weights, against 14 MB in chunks of four heads.
# The smaller products are no slower: 5.5 ms for that layer, against 10 ms in one piece (one thread).
CHUNK_ELEMENTS = 2**20


@dataclass(frozen=True)
class AttentionStages:
    """softmax(mask(similarity(Q, K) / divisor)) · V, stage by stage."""

    scores: torch.Tensor  # (..., T, T) raw similarity q_i · k_j
    scaled: torch.Tensor  # (..., T, T) scores / divisor
    masked: torch.Tensor  # (..., T, T) scaled, with masked keys at MASKED_SCORE
    weights: torch.Tensor  # (..., T, T) softmax over keys: every row sums to 1
    context: torch.Tensor  # (..., T, d) weights · V


def additive_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, T) of 1 = keep, 0 = padding -> (B, 1, T): 0 where kept, MASKED_SCORE where masked."""
    keep = attention_mask.to(torch.bool)[:, None, :]  # (B, 1, T): broadcasts over queries
    return torch.where(keep, 0.0, MASKED_SCORE)


def split_heads(projected: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, nh·d) -> (B, nh, T, d): transformers' "transpose for scores"."""
    batch, tokens, width = projected.shape
    return projected.view(batch, tokens, num_heads, width // num_heads).transpose(1, 2)  # (B, nh, T, d)


def merge_heads(per_head: torch.Tensor) -> torch.Tensor:
    """(B, nh, T, d) -> (B, T, nh·d): the heads' outputs concatenated side by side."""
    batch, num_heads, tokens, size = per_head.shape
    return per_head.transpose(1, 2).reshape(batch, tokens, num_heads * size)  # (B, T, nh·d)


def similarity_scores(query: torch.Tensor, key: torch.Tensor, similarity: str = "dot") -> torch.Tensor:
    """(..., T, d) x (..., T, d) -> (..., T, T): how well each query matches each key."""
    if similarity == "cosine":
        query = F.normalize(query, dim=-1)  # (..., T, d) unit length
        key = F.normalize(key, dim=-1)  # (..., T, d)
        return (query @ key.transpose(-1, -2)).clamp(-1.0, 1.0)  # (..., T, T), rounding kept inside [-1, 1]
    return query @ key.transpose(-1, -2)  # (..., T, T)


def attend(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None,
    divisor: float,
    similarity: str = "dot",
) -> AttentionStages:
    """Attention for queries (..., T, d) over keys and values (..., T, d).

    mask is additive, broadcastable to (..., T, T): 0 to keep a key, MASKED_SCORE to drop it.
    """
    scores = similarity_scores(query, key, similarity)  # (..., T, T)
    scaled = scores / divisor  # (..., T, T)
    masked = scaled if mask is None else (scaled + mask).clamp_(min=MASKED_SCORE)  # no -inf: rows stay finite
    weights = torch.softmax(masked, dim=-1)  # (..., T, T) rows sum to 1
    context = weights @ value  # (..., T, d)
    return AttentionStages(scores, scaled, masked, weights, context)


def attend_in_chunks(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None,
    divisor: float,
    similarity: str = "dot",
    max_elements: int = CHUNK_ELEMENTS,
) -> torch.Tensor:
    """The context of all heads (B, nh, T, d), a few heads at a time.

    Many narrow heads (head_dim 1 gives C of them) on a long text would need
    nh·T·T floats at once; chunking keeps that below max_elements.
    """
    return attend_every_head(query, key, value, mask, divisor, similarity, False, max_elements)[0]


def attend_every_head(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None,
    divisor: float,
    similarity: str = "dot",
    keep_weights: bool = True,
    max_elements: int = CHUNK_ELEMENTS,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The context (B, nh, T, d) and, with keep_weights, the weights (B, nh, T, T) of all heads, computed a
    few heads at a time (as attend_in_chunks): one pass gives both, so nothing needs every head again."""
    batch, num_heads, tokens, _ = query.shape
    step = max(1, max_elements // (batch * tokens * tokens))
    head_mask = None if mask is None else mask[:, None]  # (B, 1, 1, T): broadcasts over heads
    context = torch.empty(batch, num_heads, tokens, value.shape[-1])  # (B, nh, T, d)
    weights = torch.empty(batch, num_heads, tokens, tokens) if keep_weights else None  # (B, nh, T, T)
    for i in range(0, num_heads, step):
        stages = attend(query[:, i:i + step], key[:, i:i + step], value[:, i:i + step],
                        head_mask, divisor, similarity)  # each (B, step, T, T or d)
        context[:, i:i + step] = stages.context
        if weights is not None:
            weights[:, i:i + step] = stages.weights
        del stages  # before the next chunk's stages are made, not after: one chunk's at a time
    return context, weights
