"""What a head moves, not only how much it looks (Kobayashi et al. 2020, "Attention is not only a weight").

A head hands query i the sum Σ_j α_ij f(x_j), where f(x_j) = (x_j W_V + b_V) W_O^h is what key j offers: its
value vector taken through the head's columns of the output projection (no output bias: it is added once,
for all heads together, and belongs to no key). A weight on a key whose f is short moves little, however
large the weight: BERT parks attention on [SEP] and punctuation, whose f is short (Clark et al. 2019 read
it as a no-op). So the picture of what a head does is α_ij·‖f(x_j)‖, not α_ij alone.

Shapes: B batch, T tokens, C hidden size, nh heads, h some heads, d head size.
"""

from __future__ import annotations

import numpy as np
import torch

from attention.stages.projections import Linear


def value_norms(values: np.ndarray, output: Linear | None) -> np.ndarray:
    """(B, nh, T, d) every head's value vectors, and the output projection W_O (C, nh·d) (None: the heads'
    concatenation passes through unchanged, as with the identity source) -> (B, nh, T): ‖f(x_j)‖, the length
    of what each key offers each head."""
    if output is None:
        return np.linalg.norm(values, axis=-1).astype(np.float32)  # (B, nh, T)
    batch, num_heads, tokens, size = values.shape
    hidden = output.weight.shape[0]
    with torch.inference_mode():
        per_head = output.weight.reshape(hidden, num_heads, size)  # (C, nh, d): W_O^h is [:, h]
        offered = torch.einsum("bhtd,chd->bhtc", torch.from_numpy(np.ascontiguousarray(values)),
                               per_head)  # (B, nh, T, C): f(x_j) of every head
        return torch.linalg.vector_norm(offered, dim=-1).numpy()  # (B, nh, T)


def moved(weights: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """(..., T, T) weights α and (..., T) norms ‖f(x_j)‖ of the same heads -> (..., T, T): α_ij·‖f(x_j)‖, how
    much of key j reaches query i. Rows do not sum to 1: their sum is the length a query could at most receive."""
    return weights * norms[..., None, :]  # (..., T, T)


def weighted_by_value_norm(weights: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """(..., T, T) weights and (..., T) norms -> (..., T, T): α_ij·‖f(x_j)‖ with each row rescaled to sum to 1,
    as AttentionViz's "weight by value norm" draws it; a row that moves nothing stays 0."""
    amounts = moved(weights, norms)  # (..., T, T)
    totals = amounts.sum(axis=-1, keepdims=True)  # (..., T, 1)
    return np.divide(amounts, totals, out=np.zeros_like(amounts), where=totals > 0)
