"""A trace's outline: the names, stages, formulas and shapes of its steps, with no tensor.

The shapes panel, a view's heading and its axes read only these of a trace, and they follow from the
model's shape, the batch, the token count and the settings alone: building the trace for them computed
every head's attention (about 16 MB at 472 tokens) on every move.

The steps are written here beside attention/dissect/trace.py, which computes them: the formulas that depend on
the settings (the source, the similarity and the scaling) are written once, here, and the trace takes them from here;
tests/test_outline.py holds every other name, stage, formula and shape equal to the trace's, step for step.

Letters used in shapes: B batch, T tokens, C hidden size, nh heads, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention.text.encoding import Encoding
from attention.models.families import family_named
from attention.stages.mask_kinds import masked_where
from attention.stages.settings import ModelShape, TraceSettings


@dataclass(frozen=True)
class OutlineStep:
    """A step of the trace as the shapes panel lists it: what it is called, its shape, what made it."""

    name: str
    stage: str  # inputs, embeddings, projections, head, heads
    formula: str
    shape: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Outline:
    """Every step of one self-attention computation, in order, without its tensor (a Trace without values)."""

    settings: TraceSettings
    tokens: tuple[tuple[str, ...], ...]
    num_heads: int  # nh
    head_size: int  # d
    divisor: float  # what the raw scores are divided by
    mask_kind: str  # the mask on the scores: "none", "causal" or "window" (attention.stages.masks)
    dropped_tokens: tuple[int, ...]
    steps: tuple[OutlineStep, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(step.name for step in self.steps)

    def formula(self, name: str) -> str:
        for step in self.steps:
            if step.name == name:
                return step.formula
        raise KeyError(f"no step {name!r}; the steps are {', '.join(self.names)}")


def build_outline(shape: ModelShape, encoding: Encoding, settings: TraceSettings) -> Outline:
    """What build_trace(loaded, encoding, settings) would give, but the tensors: its tokens, head count and
    size, divisor and steps. Reads the encoding's tokens and batch size only, so an encoding without
    hidden states (encode(..., layers=())) will do."""
    batch, tokens = encoding.input_ids.shape
    return Outline(
        settings=settings,
        tokens=encoding.tokens,
        num_heads=settings.num_heads(shape),
        head_size=settings.head_size(shape),
        divisor=settings.divisor(shape),
        mask_kind=settings.mask_kind(shape),
        dropped_tokens=encoding.dropped_tokens,
        steps=outline_steps(shape, settings, batch, tokens),
    )


def outline_steps(shape: ModelShape, settings: TraceSettings, batch: int, tokens: int) -> tuple[OutlineStep, ...]:
    """The steps of a trace of `tokens` tokens in a batch of `batch` under settings, in the trace's order:
    the inputs, the embeddings, the layer's input, the projections, the traced head, then every head."""
    settings.validate(shape)
    num_heads, head_size = settings.num_heads(shape), settings.head_size(shape)
    ids = (batch, tokens)  # (B, T)
    vectors = (batch, tokens, shape.hidden_size)  # (B, T, C)
    side_by_side = (batch, tokens, num_heads * head_size)  # (B, T, nh·d)
    split = (batch, num_heads, tokens, head_size)  # (B, nh, T, d)
    one_head = (batch, tokens, head_size)  # (B, T, d)
    pairs = (batch, tokens, tokens)  # (B, T, T)
    family = family_named(shape.family)
    steps = [OutlineStep(name, "inputs", formula, ids) for name, formula in family.input_steps]
    steps += [OutlineStep(name, "embeddings", formula, vectors) for name, formula in family.embedding_steps]
    steps.append(OutlineStep("layer_input", "embeddings", family.layer_input_formula(settings.layer), vectors))
    for letter in "QKV":
        steps += [
            OutlineStep(f"{letter} (all heads)", "projections", projection_formula(settings, letter), side_by_side),
            OutlineStep(f"{letter} split", "projections", "view(B, T, nh, d).transpose(1, 2)", split),
        ]
    steps += [OutlineStep(letter, "head", head_formula(settings, letter), one_head) for letter in "QKV"]
    steps += [
        OutlineStep("scores", "head", scores_formula(settings), pairs),
        OutlineStep("scaled", "head", scaled_formula(settings, head_size), pairs),
        OutlineStep("masked", "head", masked_formula(settings.mask_kind(shape), settings.window), pairs),
        OutlineStep("weights", "head", "softmax(masked, dim=-1)", pairs),
        OutlineStep("context", "head", "weights · V", one_head),
        OutlineStep("context (all heads)", "heads", "softmax(mask(Q Kᵀ / s)) · V for every head", split),
        OutlineStep("concat", "heads", "concatenate heads: transpose(1, 2).reshape(B, T, nh·d)", side_by_side),
        # The identity's output is the concat itself, and its one head is C wide: (B, T, C) either way.
        OutlineStep("output", "heads", output_formula(settings), vectors),
    ]
    if settings.source == "bert":
        steps.append(OutlineStep("attention output", "heads", family.attention_output_formula, vectors))
    return tuple(steps)


def projection_formula(settings: TraceSettings, letter: str) -> str:
    """How every head's Q, K or V (letter) is made from the layer's input X: through the source's weights, or as X
    itself for the identity (the simplified self-attention, Q = K = V = X)."""
    w = letter.lower()
    return f"{letter} = X (identity: no W_{w}, no b_{w})" if settings.source == "identity" else f"X · W_{w}ᵀ + b_{w}"


def head_formula(settings: TraceSettings, letter: str) -> str:
    """Where the traced head's Q, K or V (letter) comes from: its slice of the split, which for the identity is X."""
    if settings.source == "identity":
        return f"{letter} = X: Q = K = V (identity, one head of d = C)"
    return f"{letter} = {letter} split[:, {settings.head}]"


def output_formula(settings: TraceSettings) -> str:
    """How the heads' concatenation becomes the block's output: through W_O, or as it is for the identity."""
    return "output = concat (identity: no W_o)" if settings.source == "identity" else "concat · W_oᵀ + b_o"


def scores_formula(settings: TraceSettings) -> str:
    """How the raw scores are made: the dot product, or the cosine of the query and the key."""
    return "cos(Q, K)" if settings.similarity == "cosine" else "Q · Kᵀ"


def masked_formula(kind: str, window: int) -> str:
    """The mask added to the scaled scores, as the reader sees it: "scaled + M (−∞ at padding keys)"."""
    return f"scaled + M (−∞ at {masked_where(kind, window)})"


def scaled_formula(settings: TraceSettings, head_size: int) -> str:
    """What the raw scores are divided by, as the reader sees it: "scores / √d_k = √32"."""
    divisor = {
        "none": "1",
        "sqrt": f"√d_k = √{head_size}",
        "linear": f"d_k = {head_size}",
        "temperature": f"τ = {settings.temperature:g}",
    }[settings.scaling]
    return f"scores / {divisor}"
