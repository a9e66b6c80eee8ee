"""A trace's outline: the names, stages, formulas and shapes of its steps, with no tensor.

The shapes panel, a view's heading and its axes read only these of a trace, and they follow from the
model's shape, the batch, the token count and the settings alone: building the trace for them computed
every head's attention (about 16 MB at 472 tokens) on every move.

The steps are written here beside attention/dissect/trace.py, which computes them: the formulas that depend on
the settings (the source, the similarity and the scaling) are written once, here, and the trace takes them from here;
tests/core/test_outline.py holds every other name, stage, formula and shape equal to the trace's, step for step.

Letters used in shapes: B batch, T tokens, C hidden size, nh heads, n_kv key/value heads (fewer than nh under
grouped-query attention), d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention.models.families import family_named
from attention.stages.mask_kinds import masked_where
from attention.stages.settings import ModelShape, TraceSettings
from attention.text.encoding import Encoding

# Which step holds "Q", "K" or "V" of every head as the scores and the context read them, (B, nh, T, d): the first of
# these a trace has (Trace.attended). Under RoPE q and k are read turned, under grouped-query attention K and V
# repeated for the query heads that share them; else as split.
ATTENDED_STEPS = {"Q": ("Q rotated", "Q split"), "K": ("K repeated", "K rotated", "K split"),
                  "V": ("V repeated", "V split")}


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
    kv_heads = settings.num_kv_heads(shape)  # n_kv: nh but under grouped-query attention
    family = family_named(shape.family)
    steps = [OutlineStep(name, "inputs", formula, ids) for name, formula in family.input_steps]
    steps += [OutlineStep(name, "embeddings", formula, vectors) for name, formula in family.embedding_steps]
    steps.append(OutlineStep("layer_input", "embeddings", family.layer_input_formula(settings.layer), vectors))
    for letter in "QKV":
        heads = num_heads if letter == "Q" else kv_heads
        steps += [
            OutlineStep(f"{letter} (all heads)", "projections", projection_formula(settings, letter),
                        (batch, tokens, heads * head_size)),  # (B, T, nh·d), K and V (B, T, n_kv·d)
            OutlineStep(f"{letter} split", "projections", split_formula(settings, shape, letter),
                        (batch, heads, tokens, head_size)),  # (B, nh, T, d), K and V (B, n_kv, T, d)
        ]
    if turns_by_position(shape, settings):
        (angles, turned_q, turned_k) = (formula for _, formula in rotary_formulas(shape))
        steps += [
            OutlineStep("RoPE angles", "projections", angles, (tokens, head_size // 2)),  # (T, d/2)
            OutlineStep("Q rotated", "projections", turned_q, split),  # (B, nh, T, d)
            OutlineStep("K rotated", "projections", turned_k, (batch, kv_heads, tokens, head_size)),  # (B, n_kv, T, d)
        ]
    if shares_heads(shape, settings):
        mapping, repeated_k, repeated_v = (formula for _, formula in grouped_formulas(shape, settings))
        steps += [
            OutlineStep("shared head of each query head", "projections", mapping, (num_heads,)),  # (nh,)
            OutlineStep("K repeated", "projections", repeated_k, split),  # (B, nh, T, d)
            OutlineStep("V repeated", "projections", repeated_v, split),  # (B, nh, T, d)
        ]
    steps += [OutlineStep(letter, "head", head_formula(settings, letter, shape), one_head) for letter in "QKV"]
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


def head_formula(settings: TraceSettings, letter: str, shape: ModelShape) -> str:
    """Where the traced head's Q, K or V (letter) comes from: its slice of the split, which for the identity is X;
    under RoPE q and k turned, under grouped-query attention its shared key or value head."""
    if settings.source == "identity":
        return f"{letter} = X: Q = K = V (identity, one head of d = C)"
    head = settings.head
    if letter == "Q":
        return f"Q = Q rotated[:, {head}]" if turns_by_position(shape, settings) else f"Q = Q split[:, {head}]"
    before = f"{letter} rotated" if letter == "K" and turns_by_position(shape, settings) else f"{letter} split"
    if shares_heads(shape, settings):
        shared = head // (settings.num_heads(shape) // settings.num_kv_heads(shape))
        return f"{letter} = {letter} repeated[:, {head}] = {before}[:, {shared}]"
    return f"{letter} = {before}[:, {head}]"


def turns_by_position(shape: ModelShape, settings: TraceSettings) -> bool:
    """Whether a trace turns q and k by position (RoPE): on a rotating family, its trained heads, and its random heads
    too, by the model's own RoPE at their head size d (θ_i = base^(−2i/d), the model's base: trace.rotation_for),
    so that a toy head on a Llama sees distances as the model's do. Position-free: the identity, the notebooks'
    simplified attention (no projection: q = k = x, whose C numbers are no head's pairs), and a random head of odd d,
    whose numbers do not pair."""
    if not family_named(shape.family).rotates:
        return False
    return settings.source == "bert" or (settings.source == "random" and settings.head_size(shape) % 2 == 0)


def shares_heads(shape: ModelShape, settings: TraceSettings) -> bool:
    """Whether the query heads share fewer key and value heads (grouped- or multi-query attention)."""
    return settings.num_kv_heads(shape) < settings.num_heads(shape)


def split_formula(settings: TraceSettings, shape: ModelShape, letter: str) -> str:
    """How every head's Q, K or V (letter) is cut into heads: nh of them, or n_kv for K and V when shared."""
    shared = letter != "Q" and shares_heads(shape, settings)
    return f"view(B, T, {'n_kv' if shared else 'nh'}, d).transpose(1, 2)"


def rotary_formulas(shape: ModelShape) -> tuple[tuple[str, str], ...]:
    """(name, formula) of the RoPE steps: the angles, then q and k turned by them (attention.stages.rotary)."""
    return (
        ("RoPE angles", "p · θ_i for position p, θ_i = base^(−2i/d), i < d/2"),
        ("Q rotated", "RoPE(Q split): (x_i, x_{i+d/2}) of position p turned by p · θ_i"),
        ("K rotated", "RoPE(K split): the same turn, so q_p · k_p' depends on p − p' alone"),
    )


def grouped_formulas(shape: ModelShape, settings: TraceSettings) -> tuple[tuple[str, str], ...]:
    """(name, formula) of the grouped-query steps: which shared head each query head reads, then K and V repeated."""
    group = settings.num_heads(shape) // settings.num_kv_heads(shape)  # g query heads share each key/value head
    key = "K rotated" if turns_by_position(shape, settings) else "K split"
    return (
        ("shared head of each query head", f"h // (nh / n_kv) = h // {group}"),
        ("K repeated", f"repeat_kv({key}, {group}): shared head h // {group} for query head h"),
        ("V repeated", f"repeat_kv(V split, {group}): shared head h // {group} for query head h"),
    )


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
