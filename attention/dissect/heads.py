"""All heads of a layer at once, and attention followed through the layers.

Everything here is read off a trace or the LayerAttention it is made of (the same from-scratch
computation the single-head view shows), so the grid, the aggregate and the rollout agree with it
by construction. Shapes: B batch, T tokens, nh heads, L layers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from attention.dissect.trace import LayerAttention, Trace, readable_tensor
from attention.dissect.value_norms import moved, value_norms
from attention.stages import masks
from attention.stages.dot_product import CHUNK_ELEMENTS, attend
from attention.stages.projections import Linear

AGGREGATES = ("mean", "max")


# What head_stage computes for every head; "moved" is α_ij·‖f(x_j)‖, what each key's value hands each query
# (attention/dissect/value_norms.py).
HEAD_STAGES = ("scores", "scaled", "masked", "weights", "context", "moved")


def head_weights(source: Trace | LayerAttention, heads: Sequence[int] | None = None,
                 max_elements: int = CHUNK_ELEMENTS) -> np.ndarray:
    """(B, h, T, T): the attention weights of the given heads (all by default) of the traced layer."""
    return head_stage(source, "weights", heads, max_elements)


def head_stage(source: Trace | LayerAttention, stage: str, heads: Sequence[int] | None = None,
               max_elements: int = CHUNK_ELEMENTS, output: Linear | None = None) -> np.ndarray:
    """One stage of the given heads (all by default) of the layer: the raw scores, the scaled scores
    (masked: with the masked keys at MASKED_SCORE), the weights or what moves, α_ij·‖f(x_j)‖ (B, h, T, T), or
    the context (B, h, T, d), as the trace computes them for its head. output: the layer's output projection
    W_O, which what moves is measured through (None passes the heads through: the identity source only).

    The weights a LayerAttention kept are taken as they are: every head's, the kept array itself (read-only,
    not a copy of megabytes); some heads', a copy of theirs. Anything else is computed a few heads at a
    time, so that only the stage itself is ever held at once (a random source with head_dim 1 has C
    heads), never the other stages beside it.
    """
    if stage not in HEAD_STAGES:
        raise ValueError(f"stage must be one of {', '.join(HEAD_STAGES)}; got {stage!r}")
    chosen = list(range(source.num_heads)) if heads is None else [int(h) for h in heads]
    for head in chosen:
        if not 0 <= head < source.num_heads:
            raise ValueError(f"head must be from 0 to {source.num_heads - 1}; got {head}")
    if stage == "moved":
        return moved(head_stage(source, "weights", chosen, max_elements),
                     head_value_norms(source, chosen, output))  # (B, h, T, T)
    if stage == "weights" and isinstance(source, LayerAttention) and source.weights is not None:
        if chosen == list(range(source.num_heads)):
            return read_only(source.weights)  # (B, nh, T, T)
        return source.weights[:, chosen]  # (B, h, T, T)
    queries, keys, values = _split_heads(source)  # (B, nh, T, d) each
    batch, _, tokens, size = queries.shape
    width = size if stage == "context" else tokens
    out = np.empty((batch, len(chosen), tokens, width), dtype=np.float32)  # (B, h, T, T or d)
    step = max(1, max_elements // (batch * tokens * tokens))
    with torch.inference_mode():
        mask = masks.additive(source.mask_kind, readable_tensor(_attention_mask(source)),
                              source.settings.window)[:, None]  # (B, 1, 1 or T, T)
        for start in range(0, len(chosen), step):
            some = chosen[start:start + step]
            stages = attend(*(torch.from_numpy(tensor[:, some]) for tensor in (queries, keys, values)),
                            mask, source.divisor, source.settings.similarity)  # each (B, step, T, T or d)
            out[:, start:start + len(some)] = getattr(stages, stage).numpy()
            del stages  # before the next chunk's stages are made: one chunk's at a time
    return out


def head_value_norms(source: Trace | LayerAttention, heads: Sequence[int] | None = None,
                     output: Linear | None = None) -> np.ndarray:
    """(B, h, T): ‖f(x_j)‖ of the given heads (all by default), the length of what each key offers each head
    through the output projection W_O (output; None only for the identity source, whose heads pass through)."""
    if output is None and source.settings.source != "identity":
        raise ValueError(f"what a head moves is measured through the layer's output projection W_O; the "
                         f"{source.settings.source} source has one: pass it as output")
    chosen = list(range(source.num_heads)) if heads is None else [int(h) for h in heads]
    return value_norms(_split_heads(source)[2], output)[:, chosen]  # (B, h, T)


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of array that cannot be written to: what a caller gets of numbers others share."""
    view = array.view()
    view.flags.writeable = False
    return view


def _split_heads(source: Trace | LayerAttention) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q, K and V of every head as its scores and context read them (a Llama's turned, shared), (B, nh, T, d) each."""
    if isinstance(source, LayerAttention):
        return tuple(source.split(letter) for letter in "QKV")
    return tuple(source.attended(letter) for letter in "QKV")


def _attention_mask(source: Trace | LayerAttention) -> np.ndarray:
    """(B, T) 1 for a token, 0 for padding."""
    return source.attention_mask if isinstance(source, LayerAttention) else source["attention_mask"]


def aggregate_heads(weights: np.ndarray, how: str) -> np.ndarray:
    """(..., nh, T, T) -> (..., T, T): the heads' mean (rows still sum to 1) or their element-wise max."""
    if how not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}; got {how!r}")
    return weights.mean(axis=-3) if how == "mean" else weights.max(axis=-3)


def rollout(layer_weights: list[np.ndarray]) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema, 2020) through layers 0..L-1, for batch row 0.

    Each layer mixes its input with the residual connection: A = ½·mean over heads + ½·I,
    rows renormalised; the product A_{L-1} ··· A_0 says how much each output position
    draws on each input token. layer_weights: one (B, nh, T, T) array per layer, in order.
    """
    if not layer_weights:
        raise ValueError("rollout needs the weights of at least one layer; got none")
    tokens = layer_weights[0].shape[-1]
    flow = np.eye(tokens)
    for weights in layer_weights:
        mixed = 0.5 * weights[0].mean(axis=0) + 0.5 * np.eye(tokens)  # (T, T)
        mixed /= mixed.sum(axis=-1, keepdims=True)
        flow = mixed @ flow  # (T, T)
    return flow.astype(np.float32)


def row_entropy(weights: np.ndarray) -> np.ndarray:
    """(..., T) rows of weights -> (...,) the entropy of each row in nats (0·log 0 taken as 0)."""
    terms = np.clip(weights, 1e-12, None)  # (..., T): the one temporary of a layer's size
    np.log(terms, out=terms)
    terms *= weights
    return -terms.sum(axis=-1)


def head_summary(weights: np.ndarray, attention_mask: np.ndarray) -> dict[str, np.ndarray]:
    """Per head of batch row 0: mean entropy of its rows (nats) and mean largest weight, real tokens only."""
    real = attention_mask[0].astype(bool)  # (T,)
    rows = weights[0] if real.all() else weights[0][:, real][:, :, real]  # (nh, T', T'): no padding, no copy
    return {"entropy": row_entropy(rows).mean(axis=-1), "max_weight": rows.max(axis=-1).mean(axis=-1)}


def head_entropies(source: Trace | LayerAttention) -> np.ndarray:
    """(nh,): the mean row entropy (nats) of every head of the layer, over the real tokens."""
    return head_summary(head_weights(source), _attention_mask(source))["entropy"]


def mean_of_heads(source: Trace | LayerAttention) -> np.ndarray:
    """(B, 1, T, T): the layer's weights averaged over its heads, the input rollout takes per layer."""
    return aggregate_heads(head_weights(source), "mean")[:, None]
