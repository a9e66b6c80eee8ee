"""All heads of a layer at once, and attention followed through the layers.

Everything here is read off traces (the same from-scratch computation the single-head
view shows), so the grid, the aggregate and the rollout agree with it by construction.
Shapes: B batch, T tokens, nh heads, L layers.
"""

from __future__ import annotations

import numpy as np
import torch

from attention.dot_product import additive_mask, attend
from attention.trace import Trace

AGGREGATES = ("mean", "max")


def head_weights(trace: Trace) -> np.ndarray:
    """(B, nh, T, T): the attention weights of every head of the traced layer, with its settings."""
    settings = trace.settings
    with torch.inference_mode():
        queries, keys, values = (torch.from_numpy(trace[f"{letter} split"]) for letter in "QKV")  # (B, nh, T, d)
        mask = additive_mask(torch.from_numpy(trace["attention_mask"]))[:, None]  # (B, 1, 1, T)
        stages = attend(queries, keys, values, mask, trace.divisor, settings.similarity)
    return stages.weights.numpy()  # (B, nh, T, T)


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
    tokens = layer_weights[0].shape[-1]
    flow = np.eye(tokens)
    for weights in layer_weights:
        mixed = 0.5 * weights[0].mean(axis=0) + 0.5 * np.eye(tokens)  # (T, T)
        mixed /= mixed.sum(axis=-1, keepdims=True)
        flow = mixed @ flow  # (T, T)
    return flow.astype(np.float32)


def head_summary(weights: np.ndarray, attention_mask: np.ndarray) -> dict[str, np.ndarray]:
    """Per head of batch row 0: mean entropy of its rows (nats) and mean largest weight, real tokens only."""
    real = attention_mask[0].astype(bool)  # (T,)
    rows = weights[0][:, real][:, :, real]  # (nh, T', T')
    entropy = -(rows * np.log(np.clip(rows, 1e-12, None))).sum(axis=-1)  # (nh, T')
    return {"entropy": entropy.mean(axis=-1), "max_weight": rows.max(axis=-1).mean(axis=-1)}
