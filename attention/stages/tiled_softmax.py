"""Softmax over a score row in blocks of keys, as FlashAttention computes it, returning every step.

softmax(s)_j = exp(s_j − max s) / Σ_k exp(s_k − max s) seems to need the whole row twice: once for its max
(subtracted so that exp never overflows), once more for the sum. The online normalizer (Milakov & Gimelshein
2018, "Online normalizer calculation for softmax") needs one pass and one block of keys at a time. It keeps

    m  the largest score seen so far
    ℓ  Σ exp(s_k − m) over the keys seen so far

and when a block brings a larger max, the sum so far was counted against the old m: multiplying it by
exp(m_old − m_new) (at most 1, so nothing overflows) makes it a sum against the new m, as if m_new had been known
from the start. After the last block m is the row's max and ℓ its sum: the softmax, exactly.

FlashAttention (Dao et al. 2022) carries the weighted sum of value rows along the same way,

    o ← o · exp(m_old − m_new) + Σ_block exp(s_j − m_new) · v_j

and divides by ℓ once at the end: o / ℓ = softmax(s) · V, the context row, without the T weights ever held
together. That is why attention fits in a GPU's fast memory for any T: a block of keys and values at a time.
Here the weights are computed as well, after the pass, with the final m and ℓ, so that a page can show them.

Letters used in shape comments: T keys in the row, b keys in a block, d head size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from attention.stages.dot_product import MASKED_SCORE
from attention.stages.limits import SOFTMAX_BLOCK


@dataclass(frozen=True)
class SoftmaxStep:
    """One block of keys taken into the running max m and the running sum ℓ."""

    block: int  # 0 for the first block
    keys: tuple[int, ...]  # the positions j of the block's keys in the row
    scores: tuple[float, ...]  # their scores s_j
    block_max: float  # max s_j over the block alone
    max_before: float  # m before the block: -inf before the first
    max_after: float  # m after it: max(max_before, block_max)
    rescale: float  # exp(max_before − max_after): 1 when the max held, 0 at the first block (nothing to rescale)
    exponentials: tuple[float, ...]  # exp(s_j − max_after) of the block's keys: what the block adds to ℓ
    sum_before: float  # ℓ before the block: 0 before the first
    sum_after: float  # sum_before · rescale + Σ exponentials


@dataclass(frozen=True)
class TiledSoftmax:
    """Every step of the online softmax of one row, and the weights it gives."""

    steps: tuple[SoftmaxStep, ...]
    weights: torch.Tensor  # (T,) exp(s − m) / ℓ with the last step's m and ℓ: sums to 1


@dataclass(frozen=True)
class ContextStep:
    """One block of keys and value rows taken into m, ℓ and the running output o."""

    softmax: SoftmaxStep  # m and ℓ through this block
    output_before: torch.Tensor  # (d,) o before the block: zeros before the first
    output_after: torch.Tensor  # (d,) output_before · rescale + Σ exponentials_j · v_j


@dataclass(frozen=True)
class TiledContext:
    """Every step of FlashAttention's pass over one query's row, the weights, and the context o / ℓ."""

    steps: tuple[ContextStep, ...]
    weights: torch.Tensor  # (T,) as TiledSoftmax's
    context: torch.Tensor  # (d,) the last output / the last sum: softmax(s) · V


def tiled_softmax(scores: torch.Tensor | np.ndarray, block_size: int) -> TiledSoftmax:
    """The softmax of one score row (T,), block_size keys at a time, with a record of every block."""
    row = _score_row(scores)  # (T,)
    steps = tuple(step for step, _ in _online_blocks(row, block_size))
    return TiledSoftmax(steps, _final_weights(row, steps[-1]))


def tiled_context(
    scores: torch.Tensor | np.ndarray, values: torch.Tensor | np.ndarray, block_size: int
) -> TiledContext:
    """softmax(scores) · values for one query, scores (T,) and values (T, d), in one pass over blocks of keys."""
    row = _score_row(scores)  # (T,)
    value_rows = torch.as_tensor(values).to(row.dtype)  # (T, d)
    if value_rows.dim() != 2 or value_rows.shape[0] != row.shape[0]:
        raise ValueError(f"values must be one row per key, (T, d) with T = {row.shape[0]}; "
                         f"got shape {tuple(value_rows.shape)}")
    output = value_rows.new_zeros(value_rows.shape[1])  # (d,) o: nothing seen yet
    steps = []
    for step, exponentials in _online_blocks(row, block_size):
        block_values = value_rows[step.keys[0]:step.keys[-1] + 1]  # (b, d)
        updated = output * step.rescale + exponentials @ block_values  # (d,) rescaled, then the block added
        steps.append(ContextStep(step, output, updated))
        output = updated
    return TiledContext(tuple(steps), _final_weights(row, steps[-1].softmax), output / steps[-1].softmax.sum_after)


def _online_blocks(row: torch.Tensor, block_size: int) -> Iterator[tuple[SoftmaxStep, torch.Tensor]]:
    """Each block's step, with its exponentials (b,) as a tensor for the caller's weighted sum of values."""
    tokens = row.shape[0]
    SOFTMAX_BLOCK.narrowed(1, tokens).require("block_size", block_size, f"keys per block of a row of {tokens}")
    running_max = row.new_tensor(-torch.inf)  # () m
    running_sum = row.new_tensor(0.0)  # () ℓ
    for block, start in enumerate(range(0, tokens, block_size)):
        block_scores = row[start:start + block_size]  # (b,)
        block_max = block_scores.max()  # ()
        new_max = torch.maximum(running_max, block_max)  # ()
        if new_max == -torch.inf:  # every key so far masked with -inf: nothing counted yet, nothing to rescale
            rescale = row.new_tensor(1.0)  # ()
            exponentials = torch.zeros_like(block_scores)  # (b,)
        else:
            rescale = torch.exp(running_max - new_max)  # () in [0, 1]
            exponentials = torch.exp(block_scores - new_max)  # (b,) in [0, 1]: no overflow
        new_sum = running_sum * rescale + exponentials.sum()  # ()
        yield SoftmaxStep(
            block=block,
            keys=tuple(range(start, start + block_scores.shape[0])),
            scores=tuple(block_scores.tolist()),
            block_max=block_max.item(),
            max_before=running_max.item(),
            max_after=new_max.item(),
            rescale=rescale.item(),
            exponentials=tuple(exponentials.tolist()),
            sum_before=running_sum.item(),
            sum_after=new_sum.item(),
        ), exponentials
        running_max, running_sum = new_max, new_sum


def _final_weights(row: torch.Tensor, last: SoftmaxStep) -> torch.Tensor:
    """(T,) exp(s − m) / ℓ with the row's m and ℓ, as the last step left them."""
    return torch.exp(row - last.max_after) / last.sum_after  # (T,)


def _score_row(scores: torch.Tensor | np.ndarray) -> torch.Tensor:
    """scores as a floating tensor (T,) the softmax is defined on: float32 at least, the input's if wider."""
    row = torch.as_tensor(scores)
    row = row.to(torch.promote_types(row.dtype, torch.float32))  # (T,)
    if row.dim() != 1 or row.shape[0] == 0:
        raise ValueError(f"scores must be one row of at least one key, shape (T,); got shape {tuple(row.shape)}")
    if torch.isnan(row).any() or (row == torch.inf).any():
        raise ValueError("scores must be finite or -inf (a masked key); got NaN or +inf")
    if (row == -torch.inf).all():
        raise ValueError(f"every key is masked with -inf, so the softmax is undefined; mask with MASKED_SCORE "
                         f"({MASKED_SCORE:g}) to keep such a row finite")
    return row
