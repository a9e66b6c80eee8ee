"""Why divide by √d_k: the spread of q·k for random vectors, and what each scaling does to softmax.

For q and k with independent unit-variance entries, var(q · k) = d_k (the paper's
footnote 4): unscaled, the scores of wide heads grow so large that softmax puts nearly
all weight on one key; dividing by √d_k keeps their variance at 1 whatever d_k; dividing
by d_k shrinks it to 1/d_k, and softmax flattens towards uniform.

Letters used in shape comments: R rows of scores, T tokens, d head size, nh heads, H head sizes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from attention.dissect.heads import row_entropy
from attention.stages.settings import scaling_divisor

__all__ = [
    "dot_product_variance",
    "head_softmax_statistics",
    "random_scores",
    "random_scores_by_head_size",
    "random_softmax_statistics",
    "scaling_divisor",
    "softmax_statistics",
    "softmax_statistics_by_head_size",
    "softmax_statistics_by_temperature",
    "temperature_row",
    "variance_by_head_size",
]


def dot_product_variance(head_size: int, samples: int = 20_000, seed: int = 0, divisor: float = 1.0) -> float:
    """Measured variance of (q · k) / divisor for q, k with independent N(0, 1) entries."""
    if head_size < 1 or samples < 2:
        raise ValueError(f"head_size must be at least 1 and samples at least 2; got {head_size}, {samples}")
    generator = torch.Generator().manual_seed(seed)
    query = torch.randn(samples, head_size, generator=generator)  # (N, d)
    key = torch.randn(samples, head_size, generator=generator)  # (N, d)
    dots = (query * key).sum(dim=-1) / divisor  # (N,)
    return float(dots.var())


def variance_by_head_size(head_sizes: Sequence[int], scalings: Sequence[str], samples: int = 20_000,
                          seed: int = 0) -> dict[str, np.ndarray]:
    """Per scaling, (H,) measured var(q · k / divisor) at each head size.

    One sample of dot products per head size serves every scaling: dividing by c divides the variance by c².
    """
    unscaled = np.array([dot_product_variance(size, samples, seed) for size in head_sizes])  # (H,)
    return {
        scaling: unscaled / np.array([scaling_divisor(scaling, size) for size in head_sizes]) ** 2  # (H,)
        for scaling in scalings
    }


def softmax_statistics(scores: np.ndarray, divisor_value: float) -> tuple[float, float]:
    """Mean entropy (nats) and mean largest weight of softmax(scores / divisor) over the last axis."""
    entropy, largest = _row_statistics(scores, divisor_value)
    return float(entropy.mean()), float(largest.mean())


def random_scores(head_size: int, tokens: int, rows: int = 256, seed: int = 0) -> np.ndarray:
    """(rows, tokens) raw scores q · k_j for random unit-variance queries and keys."""
    generator = torch.Generator().manual_seed(seed)
    queries = torch.randn(rows, 1, head_size, generator=generator)  # (R, 1, d)
    keys = torch.randn(rows, tokens, head_size, generator=generator)  # (R, T, d)
    return (queries * keys).sum(dim=-1).numpy()  # (R, T)


def random_scores_by_head_size(head_sizes: Sequence[int], tokens: int, rows: int = 256,
                               seed: int = 0) -> np.ndarray:
    """(H, R, T): random_scores for each head size, each drawn from the same seed.

    Drawn once, they serve every scaling and temperature: only the divisor changes.
    """
    return np.stack([random_scores(size, tokens, rows, seed) for size in head_sizes])  # (H, R, T)


def softmax_statistics_by_head_size(scores: np.ndarray, head_sizes: Sequence[int], scalings: Sequence[str],
                                    temperature: float = 1.0) -> dict[str, dict[str, np.ndarray]]:
    """Per scaling, the (H,) mean entropy and mean largest weight of softmax(scores / divisor) at each head size.

    scores is (H, R, T), one (R, T) block of raw scores per head size, as random_scores_by_head_size makes.
    """
    if len(scores) != len(head_sizes):
        raise ValueError(f"scores must hold one block per head size: {len(head_sizes)} head sizes, "
                         f"{len(scores)} blocks")
    statistics = {scaling: {"entropy": [], "max_weight": []} for scaling in scalings}
    for size, block in zip(head_sizes, scores, strict=True):  # block (R, T)
        for scaling in scalings:
            entropy, largest = softmax_statistics(block, scaling_divisor(scaling, size, temperature))
            statistics[scaling]["entropy"].append(entropy)
            statistics[scaling]["max_weight"].append(largest)
    return {scaling: {name: np.asarray(values) for name, values in columns.items()}
            for scaling, columns in statistics.items()}


def softmax_statistics_by_temperature(scores: np.ndarray, temperatures: Sequence[float]
                                      ) -> dict[str, np.ndarray]:
    """The (N, H) mean entropy and mean largest weight of softmax(scores / τ) at each of N temperatures and each
    head size: scores (H, R, T) as random_scores_by_head_size makes. Every τ of a slider at once, so that a
    chart can switch between them in the browser; each number is the one softmax_statistics gives for that τ
    alone, to the last bit (the same float32 operations, row by row).
    """
    if not len(temperatures) or min(temperatures) <= 0:
        raise ValueError(f"temperatures must be a non-empty list of positive numbers; got {temperatures!r}")
    divisors = torch.tensor(temperatures, dtype=torch.float32)[:, None, None]  # (N, 1, 1)
    entropy, largest = [], []
    for block in scores:  # (R, T), one head size at a time: N·R·T floats, not H times as many
        weights = torch.softmax(_float_tensor(block)[None] / divisors, dim=-1).numpy()  # (N, R, T)
        entropy.append(row_entropy(weights).mean(axis=-1))  # (N,)
        largest.append(weights.max(axis=-1).mean(axis=-1))  # (N,)
    return {"entropy": np.stack(entropy, axis=1), "max_weight": np.stack(largest, axis=1)}  # (N, H) each


def random_softmax_statistics(head_sizes: Sequence[int], tokens: int, scalings: Sequence[str],
                              temperature: float = 1.0, rows: int = 256,
                              seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """Per scaling, the (H,) mean entropy and mean largest weight of softmax over random scores of each head size."""
    scores = random_scores_by_head_size(head_sizes, tokens, rows, seed)  # (H, R, T)
    return softmax_statistics_by_head_size(scores, head_sizes, scalings, temperature)


def head_softmax_statistics(queries: np.ndarray, keys: np.ndarray, scalings: Sequence[str],
                            temperature: float = 1.0) -> dict[str, dict[str, np.ndarray]]:
    """Per scaling, each head's (nh,) mean entropy and mean largest weight, for one text without padding.

    queries and keys are (nh, T, d): a layer's heads, as the trace's "Q split"[0] and "K split"[0].
    """
    scores = np.asarray(queries, dtype=np.float32) @ np.swapaxes(np.asarray(keys, dtype=np.float32), -1, -2)
    head_size = queries.shape[-1]  # (nh, T, T) scores above, d here
    statistics = {}
    for scaling in scalings:
        entropy, largest = _row_statistics(scores, scaling_divisor(scaling, head_size, temperature))  # (nh, T) each
        statistics[scaling] = {"entropy": entropy.mean(axis=-1), "max_weight": largest.mean(axis=-1)}
    return statistics


def temperature_row(scores_row: np.ndarray, temperatures: list[float]) -> np.ndarray:
    """(len(temperatures), T): one row of scores through softmax at each temperature τ."""
    if not temperatures or min(temperatures) <= 0:
        raise ValueError(f"temperatures must be a non-empty list of positive numbers; got {temperatures!r}")
    row = _float_tensor(scores_row)  # (T,)
    return torch.stack([torch.softmax(row / tau, dim=-1) for tau in temperatures]).numpy()


def _row_statistics(scores: np.ndarray, divisor_value: float) -> tuple[np.ndarray, np.ndarray]:
    """(...,) entropy (nats) and largest weight of each row of softmax(scores / divisor)."""
    if not divisor_value > 0:
        raise ValueError(f"the divisor must be a positive number; got {divisor_value!r}")
    weights = torch.softmax(_float_tensor(scores) / divisor_value, dim=-1).numpy()
    return row_entropy(weights), weights.max(axis=-1)


def _float_tensor(values: np.ndarray) -> torch.Tensor:
    """A float32 copy: torch refuses arrays with negative strides and warns about read-only ones."""
    return torch.from_numpy(np.array(values, dtype=np.float32))
