"""The weights that turn a layer's input into queries, keys and values, and heads back into C.

Three sources, the three ways the seed notebooks build Q, K and V:
identity (Q = K = V = E), random (fresh nn.Linear-style layers from a seed),
bert (the trained weights of one layer, of whichever family the model is: attention.models.families);
attention.dissect.trace.projections_for chooses among them.
Shapes: C hidden size, nh heads, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Linear:
    """y = x · weightᵀ + bias, as torch.nn.Linear stores it."""

    weight: torch.Tensor  # (out, in)
    bias: torch.Tensor  # (out,)

    def __call__(self, inputs: torch.Tensor) -> torch.Tensor:
        return F.linear(inputs, self.weight, self.bias)  # (..., out), the kernel nn.Linear uses


@dataclass(frozen=True)
class Projections:
    """query, key, value: C -> nh·d; output: nh·d -> C. None means "pass through unchanged"."""

    query: Linear | None
    key: Linear | None
    value: Linear | None
    output: Linear | None


def random_projections(hidden_size: int, head_size: int, num_heads: int, seed: int) -> Projections:
    """Fresh layers initialised as torch.nn.Linear does, reproducible from the seed.

    A private generator, not torch.manual_seed: the global one is shared by every
    thread of the server, and two sessions must not disturb each other's draws.
    """
    generator = torch.Generator().manual_seed(seed)
    width = num_heads * head_size  # nh·d, at most C

    def linear(fan_in: int, fan_out: int) -> Linear:
        bound = fan_in**-0.5  # nn.Linear's default: U(-1/√fan_in, 1/√fan_in)
        weight = torch.empty(fan_out, fan_in).uniform_(-bound, bound, generator=generator)  # (out, in)
        bias = torch.empty(fan_out).uniform_(-bound, bound, generator=generator)  # (out,)
        return Linear(weight, bias)

    return Projections(
        query=linear(hidden_size, width),  # (nh·d, C)
        key=linear(hidden_size, width),  # (nh·d, C)
        value=linear(hidden_size, width),  # (nh·d, C)
        output=linear(width, hidden_size),  # (C, nh·d)
    )
