"""What the user chose: one frozen dataclass, validated once against the model.

Every other module reads these values; none of them re-checks user input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attention.stages.limits import SEED, TEMPERATURE, WINDOW, IntRange, require_choice
from attention.stages.mask_kinds import MASKS, mask_kind

SOURCES = ("identity", "random", "bert")
# Each source as a reader calls it. "bert" is the trained weights' name in a link (source=bert) since the page read
# BERT alone; a GPT-2's weights are trained too, so the page calls them so whatever the model.
SOURCE_LABELS = {"identity": "identity", "random": "random", "bert": "trained"}
SCALINGS = ("none", "sqrt", "linear", "temperature")
SIMILARITIES = ("dot", "cosine")


@dataclass(frozen=True)
class ModelShape:
    """The few facts of a model's config the settings depend on."""

    num_layers: int
    num_heads: int
    hidden_size: int  # C
    family: str = "bert"  # the config's model_type (attention.models.families)
    own_mask: str = "none"  # the mask it was trained with: "none" (padding only) or "causal" (attention.stages.masks)
    # n_kv: the key and value heads the query heads share (grouped-query attention, a Llama's); None: one each
    num_kv_heads: int | None = None

    @property
    def head_size(self) -> int:  # d of a trained head
        return self.hidden_size // self.num_heads

    @property
    def kv_heads(self) -> int:  # n_kv of the trained heads: nh unless the query heads share keys and values
        return self.num_kv_heads or self.num_heads


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
    # Which keys a query may look at (attention.stages.masks): the model's own, or a what-if on any model.
    mask: str = "model"
    # How many tokens back a query sees under mask="window", besides itself.
    window: int = 4

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

    def num_kv_heads(self, shape: ModelShape) -> int:
        """How many key and value heads the query heads read: the model's own n_kv for its trained weights (fewer
        than nh under grouped-query attention), one for each query head otherwise."""
        return shape.kv_heads if self.source == "bert" else self.num_heads(shape)

    def divisor(self, shape: ModelShape) -> float:
        """What the raw scores are divided by."""
        return scaling_divisor(self.scaling, self.head_size(shape), self.temperature)

    def mask_kind(self, shape: ModelShape) -> str:
        """The mask these settings put on the model: "none", "causal" or "window" (attention.stages.masks)."""
        return mask_kind(self.mask, shape.own_mask)

    def validate(self, shape: ModelShape) -> TraceSettings:
        """Raise ValueError naming the valid values; return self when all is well."""
        require_choice("source", self.source, SOURCES)
        require_choice("scaling", self.scaling, SCALINGS)
        require_choice("similarity", self.similarity, SIMILARITIES)
        require_choice("mask", self.mask, MASKS)
        WINDOW.require("window", self.window, "how many tokens back a query sees")
        IntRange(0, shape.num_layers - 1).require("layer", self.layer, f"the model has {shape.num_layers} layers")
        if self.head_dim is not None:
            if self.source == "bert" and self.head_dim != shape.head_size:
                raise ValueError(
                    f"head_dim is fixed at {shape.head_size} for the trained heads "
                    f"(hidden size {shape.hidden_size} / {shape.num_heads} heads); got {self.head_dim}"
                )
            IntRange(1, shape.hidden_size).require("head_dim", self.head_dim, f"the hidden size is {shape.hidden_size}")
        num_heads = self.num_heads(shape)
        heads = IntRange(0, num_heads - 1)
        heads.require("head", self.head, f"these settings give {num_heads} heads")
        TEMPERATURE.require("temperature", self.temperature)
        SEED.require("seed", self.seed, "what torch's generator takes")
        if not isinstance(self.heads_off, tuple):
            raise ValueError(f"heads_off must be a tuple of head numbers, e.g. (0, 3); got {self.heads_off!r}")
        for off in self.heads_off:
            heads.require("heads_off entry", off, f"these settings give {num_heads} heads")
        return self


def scaling_divisor(scaling: str, head_size: int, temperature: float = 1.0) -> float:
    """What raw scores are divided by: 1, √d_k, d_k or τ."""
    require_choice("scaling", scaling, SCALINGS)
    return {"none": 1.0, "sqrt": head_size**0.5, "linear": float(head_size), "temperature": temperature}[scaling]
