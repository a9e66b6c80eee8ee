"""What the user chose: one frozen dataclass, validated once against the model.

Every other module reads these values; none of them re-checks user input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real

SOURCES = ("identity", "random", "bert")
SCALINGS = ("none", "sqrt", "linear", "temperature")
SIMILARITIES = ("dot", "cosine")
MAX_SEED = 2**63 - 1
# Beyond these, softmax of scores / τ overflows to NaN or is indistinguishable from uniform.
TEMPERATURE_RANGE = (1e-3, 1e3)


@dataclass(frozen=True)
class ModelShape:
    """The few numbers of a BERT config the settings depend on."""

    num_layers: int
    num_heads: int
    hidden_size: int  # C

    @property
    def head_size(self) -> int:  # d of a trained head
        return self.hidden_size // self.num_heads


@dataclass(frozen=True)
class TraceSettings:
    """One self-attention computation to dissect.

    layer and head count from 0, as transformers does.
    """

    layer: int = 0
    head: int = 0
    # "bert" shows what the trained model does; the other two are the notebooks' toys.
    source: str = "bert"
    # Only "random" lets the user pick it; None means "the natural size" (C / nh).
    head_dim: int | None = None
    # "sqrt" is the paper's choice and what BERT was trained with.
    scaling: str = "sqrt"
    # The divisor used when scaling == "temperature"; 1.0 leaves the scores as they are.
    temperature: float = 1.0
    similarity: str = "dot"
    # Seeds the random projections, so that a shared link shows the same matrices.
    seed: int = 0
    # Heads whose context is set to zero before the output projection.
    heads_off: tuple[int, ...] = field(default=())

    def head_size(self, shape: ModelShape) -> int:
        """d_k for these settings: C for identity, head_dim for random, the model's for bert."""
        if self.source == "identity":
            return shape.hidden_size
        if self.source == "random" and self.head_dim is not None:
            return self.head_dim
        return shape.head_size

    def num_heads(self, shape: ModelShape) -> int:
        """How many heads the multi-head step concatenates (C // d for random)."""
        if self.source == "identity":
            return 1
        if self.source == "random":
            return shape.hidden_size // self.head_size(shape)
        return shape.num_heads

    def divisor(self, shape: ModelShape) -> float:
        """What the raw scores are divided by."""
        return scaling_divisor(self.scaling, self.head_size(shape), self.temperature)

    def validate(self, shape: ModelShape) -> TraceSettings:
        """Raise ValueError naming the valid values; return self when all is well."""
        _require_choice("source", self.source, SOURCES)
        _require_choice("scaling", self.scaling, SCALINGS)
        _require_choice("similarity", self.similarity, SIMILARITIES)
        _require_int_in("layer", self.layer, 0, shape.num_layers - 1,
                        f"the model has {shape.num_layers} layers")
        if self.head_dim is not None:
            if self.source == "bert" and self.head_dim != shape.head_size:
                raise ValueError(
                    f"head_dim is fixed at {shape.head_size} for the trained heads "
                    f"(hidden size {shape.hidden_size} / {shape.num_heads} heads); got {self.head_dim}"
                )
            _require_int_in("head_dim", self.head_dim, 1, shape.hidden_size,
                            f"the hidden size is {shape.hidden_size}")
        num_heads = self.num_heads(shape)
        _require_int_in("head", self.head, 0, num_heads - 1,
                        f"these settings give {num_heads} heads")
        low, high = TEMPERATURE_RANGE
        if not (isinstance(self.temperature, Real) and math.isfinite(self.temperature)
                and low <= self.temperature <= high):
            raise ValueError(f"temperature must be a number from {low:g} to {high:g}; got {self.temperature!r}")
        _require_int_in("seed", self.seed, 0, MAX_SEED, "what torch's generator takes")
        if not isinstance(self.heads_off, tuple):
            raise ValueError(f"heads_off must be a tuple of head numbers, e.g. (0, 3); got {self.heads_off!r}")
        for off in self.heads_off:
            _require_int_in("heads_off entry", off, 0, num_heads - 1,
                            f"these settings give {num_heads} heads")
        return self


def scaling_divisor(scaling: str, head_size: int, temperature: float = 1.0) -> float:
    """What raw scores are divided by: 1, √d_k, d_k or τ."""
    _require_choice("scaling", scaling, SCALINGS)
    return {"none": 1.0, "sqrt": head_size**0.5, "linear": float(head_size), "temperature": temperature}[scaling]


def _require_choice(name: str, value: object, valid: tuple[str, ...]) -> None:
    if value not in valid:
        raise ValueError(f"{name} must be one of {', '.join(valid)}; got {value!r}")


def _require_int_in(name: str, value: object, low: int, high: int, why: str) -> None:
    if not isinstance(value, Integral) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high} ({why}); got {value!r}")
