"""Why divide by √d_k: the spread of q·k for random unit-variance vectors, measured."""

from __future__ import annotations

import torch


def dot_product_variance(head_size: int, samples: int = 20_000, seed: int = 0, divisor: float = 1.0) -> float:
    """Measured variance of (q · k) / divisor for q, k with independent N(0, 1) entries.

    Theory: var(q · k) = d_k, so dividing by √d_k brings it back to 1 (the paper's footnote 4).
    """
    if head_size < 1 or samples < 2:
        raise ValueError(f"head_size must be at least 1 and samples at least 2; got {head_size}, {samples}")
    generator = torch.Generator().manual_seed(seed)
    query = torch.randn(samples, head_size, generator=generator)  # (N, d)
    key = torch.randn(samples, head_size, generator=generator)  # (N, d)
    dots = (query * key).sum(dim=-1) / divisor  # (N,)
    return float(dots.var())
