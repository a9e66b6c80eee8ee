"""Why divide by √d_k: the spread of q·k for random vectors, and what each scaling does to softmax.

For q and k with independent unit-variance entries, var(q · k) = d_k (the paper's
footnote 4): unscaled, the scores of wide heads grow so large that softmax puts nearly
all weight on one key; dividing by √d_k keeps their variance at 1 whatever d_k; dividing
by d_k shrinks it to 1/d_k, and softmax flattens towards uniform.
"""

from __future__ import annotations

import numpy as np
import torch

from attention.settings import scaling_divisor

__all__ = ["dot_product_variance", "random_scores", "scaling_divisor", "softmax_statistics", "temperature_row"]


def dot_product_variance(head_size: int, samples: int = 20_000, seed: int = 0, divisor: float = 1.0) -> float:
    """Measured variance of (q · k) / divisor for q, k with independent N(0, 1) entries."""
    if head_size < 1 or samples < 2:
        raise ValueError(f"head_size must be at least 1 and samples at least 2; got {head_size}, {samples}")
    generator = torch.Generator().manual_seed(seed)
    query = torch.randn(samples, head_size, generator=generator)  # (N, d)
    key = torch.randn(samples, head_size, generator=generator)  # (N, d)
    dots = (query * key).sum(dim=-1) / divisor  # (N,)
    return float(dots.var())


def softmax_statistics(scores: np.ndarray, divisor_value: float) -> tuple[float, float]:
    """Mean entropy (nats) and mean largest weight of softmax(scores / divisor) over the last axis."""
    weights = torch.softmax(torch.from_numpy(np.asarray(scores, dtype=np.float32)) / divisor_value, dim=-1)
    entropy = -(weights * torch.log(weights.clamp_min(1e-12))).sum(dim=-1)
    return float(entropy.mean()), float(weights.max(dim=-1).values.mean())


def random_scores(head_size: int, tokens: int, rows: int = 256, seed: int = 0) -> np.ndarray:
    """(rows, tokens) raw scores q · k_j for random unit-variance queries and keys."""
    generator = torch.Generator().manual_seed(seed)
    queries = torch.randn(rows, 1, head_size, generator=generator)  # (R, 1, d)
    keys = torch.randn(rows, tokens, head_size, generator=generator)  # (R, T, d)
    return (queries * keys).sum(dim=-1).numpy()  # (R, T)


def temperature_row(scores_row: np.ndarray, temperatures: list[float]) -> np.ndarray:
    """(len(temperatures), T): one row of scores through softmax at each temperature τ."""
    row = torch.from_numpy(np.asarray(scores_row, dtype=np.float32))
    return torch.stack([torch.softmax(row / tau, dim=-1) for tau in temperatures]).numpy()
