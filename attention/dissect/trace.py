"""One self-attention computation as an ordered list of named steps, each with its tensor.

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, n_kv key/value heads (nh but under
grouped-query attention), d head size. The trace reuses an Encoding's hidden states, so moving layer, head, head_dim or
scaling never runs the model again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from attention.dissect.outline import (
    ATTENDED_STEPS,
    grouped_formulas,
    head_formula,
    masked_formula,
    output_formula,
    projection_formula,
    rotary_formulas,
    scaled_formula,
    scores_formula,
    shares_heads,
    split_formula,
    turns_by_position,
)
from attention.models.loading import LoadedModel
from attention.stages import masks
from attention.stages.dot_product import attend, attend_every_head, merge_heads, split_heads
from attention.stages.projections import Linear, Projections, random_projections
from attention.stages.rotary import Rotation, repeat_kv
from attention.stages.settings import ModelShape, TraceSettings
from attention.text.encoding import Encoding


@dataclass(frozen=True, eq=False)
class Step:
    """A named tensor of the computation, with the formula that made it."""

    name: str
    stage: str  # inputs, embeddings, projections, head, heads
    formula: str
    value: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape)


@dataclass(frozen=True, eq=False)
class Trace:
    """Every step of one self-attention computation, in the order it happens."""

    settings: TraceSettings
    tokens: tuple[tuple[str, ...], ...]
    num_heads: int  # nh
    head_size: int  # d
    divisor: float  # what the raw scores were divided by
    mask_kind: str  # the mask on the scores: "none", "causal" or "window" (attention.stages.masks)
    dropped_tokens: tuple[int, ...]
    steps: tuple[Step, ...]

    def __getitem__(self, name: str) -> np.ndarray:
        for step in self.steps:
            if step.name == name:
                return step.value
        raise KeyError(f"no step {name!r}; the steps are {', '.join(s.name for s in self.steps)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(step.name for step in self.steps)

    def attended(self, letter: str) -> np.ndarray:
        """(B, nh, T, d): "Q", "K" or "V" of every head as the scores and the context read them: "Q split" itself,
        or under RoPE the queries turned ("Q rotated"), and under grouped-query attention each query head's
        shared key or value head ("K repeated"), whose "K split" has n_kv heads only."""
        named = set(self.names)
        return self[next(name for name in ATTENDED_STEPS[letter] if name in named)]


@dataclass(frozen=True, eq=False)
class LayerAttention:
    """Every head of one layer, computed once: the projections, every head's context and, when kept, every
    head's weights. A trace of any head of the layer, the charts' stacks of every head, the proof against
    transformers, the entropies and the rollout are all taken from it, so none computes the heads again.

    Kept as the arrays the projections and the concatenation make, (B, T, nh·d) each: the split heads
    and every head's context are views of them, not copies (a cache pickles each array once). What a
    trace needs kept is less (contexts_only). The projections are kept as the heads read them: a Llama's
    queries and keys turned by position (RoPE), and its n_kv key and value heads handed to the nh query heads
    that share them (repeat_kv), so that every head here has its own Q, K and V, as BERT's and GPT-2's have.
    """

    settings: TraceSettings  # head 0 stands for any head: nothing here depends on it
    num_heads: int  # nh
    head_size: int  # d
    divisor: float
    mask_kind: str  # the mask on the scores: "none", "causal" or "window" (attention.stages.masks)
    attention_mask: np.ndarray  # (B, T)
    projected: dict[str, np.ndarray] | None  # "Q", "K", "V": (B, T, nh·d) each as the heads read them, or None
    concat: np.ndarray | None  # (B, T, nh·d) every head's context side by side, switched-off heads at 0; None
    # when only the projections were made (layer_projections)
    weights: np.ndarray | None  # (B, nh, T, T) every head's softmax, or None when not kept

    def __post_init__(self) -> None:
        """Every array read-only: the page's cache hands one layer to every session that asks for it
        (components/caches/layers.py), and a view that wrote into one would change what every student sees.
        Read-only views, so that the arrays handed in (an encoding's mask) are left as they were; one view for
        an array under several names (identity: Q, K and V are X), so that a pickle still holds it once."""
        views: dict[int, np.ndarray] = {}

        def read_only(array: np.ndarray | None) -> np.ndarray | None:
            if array is None or not array.flags.writeable:
                return array
            if id(array) not in views:
                views[id(array)] = array.view()
                views[id(array)].flags.writeable = False
            return views[id(array)]

        for name in ("attention_mask", "concat", "weights"):
            object.__setattr__(self, name, read_only(getattr(self, name)))
        if self.projected is not None:
            object.__setattr__(self, "projected",
                               {letter: read_only(value) for letter, value in self.projected.items()})

    def split(self, letter: str) -> np.ndarray:
        """(B, nh, T, d): "Q", "K" or "V" cut into heads, a view of its projection."""
        if self.projected is None:
            raise ValueError("this LayerAttention keeps every head's context only, not the projections")
        return _heads_of(self.projected[letter], self.num_heads)

    @property
    def context(self) -> np.ndarray:
        """(B, nh, T, d): every head's context, a view of the concatenation."""
        return _heads_of(self.concat, self.num_heads)

    def contexts_only(self) -> LayerAttention:
        """The layer as a trace needs it kept: every head's context, which takes every head's attention to
        make (a quarter of the projections' bytes, a nineteenth of the weights' at 512 tokens). A trace makes
        the projections again from the layer's input: one matrix product each, the same numbers."""
        return dataclasses.replace(self, projected=None, weights=None)


def layer_attention(loaded: LoadedModel, encoding: Encoding, settings: TraceSettings,
                    keep_weights: bool = True) -> LayerAttention:
    """Every head of layer settings.layer at once (settings.head is not read): the projections, then each
    head's weights and context in one pass over the heads. keep_weights=False leaves the weights out, for
    settings with too many heads to hold them all (head_dim 1 on a long text: C·T·T floats)."""
    shape = loaded.shape
    settings.validate(shape)
    num_heads = settings.num_heads(shape)
    divisor = settings.divisor(shape)
    with torch.inference_mode():
        projected = _heads_read(loaded, settings, _project(loaded, encoding, settings))  # (B, T, nh·d) each
        heads = {letter: split_heads(value, num_heads) for letter, value in projected.items()}  # (B, nh, T, d)
        kind = settings.mask_kind(shape)
        mask = masks.additive(kind, torch.from_numpy(encoding.attention_mask), settings.window)  # (B, 1 or T, T)
        contexts, weights = attend_every_head(heads["Q"], heads["K"], heads["V"], mask, divisor,
                                              settings.similarity, keep_weights)  # (B, nh, T, d), (B, nh, T, T)
        if settings.heads_off:
            keep = torch.ones(num_heads)
            keep[list(settings.heads_off)] = 0.0
            contexts = contexts * keep[None, :, None, None]  # (B, nh, T, d) switched-off heads at 0
        return LayerAttention(
            settings=settings,
            num_heads=num_heads,
            head_size=settings.head_size(shape),
            divisor=divisor,
            mask_kind=kind,
            attention_mask=encoding.attention_mask,
            projected=_as_numpy(projected),
            concat=merge_heads(contexts).numpy(),  # (B, T, nh·d)
            weights=None if weights is None else weights.numpy(),
        )


def layer_projections(loaded: LoadedModel, encoding: Encoding, settings: TraceSettings) -> LayerAttention:
    """The projections of layer settings.layer and no head attended yet: what a stage of a few of its heads is
    computed from (heads.head_stage), the same numbers as from layer_attention, for a fraction of the work
    (the projections and one head of 12 at 474 tokens on the bundled model: 3 ms, against 15 ms for every head)."""
    shape = loaded.shape
    settings.validate(shape)
    with torch.inference_mode():
        projected = _as_numpy(_heads_read(loaded, settings, _project(loaded, encoding, settings)))  # (B, T, nh·d) each
    return LayerAttention(settings=settings, num_heads=settings.num_heads(shape), head_size=settings.head_size(shape),
                          divisor=settings.divisor(shape), mask_kind=settings.mask_kind(shape),
                          attention_mask=encoding.attention_mask,
                          projected=projected, concat=None, weights=None)


def build_trace(loaded: LoadedModel, encoding: Encoding, settings: TraceSettings,
                layer: LayerAttention | None = None) -> Trace:
    """Dissect layer settings.layer, head settings.head for an encoded batch.

    layer: layer_attention(loaded, encoding, settings), if at hand (its weights need not be kept): every
    head of the layer computed once, so that a trace of another head computes its own steps alone.
    """
    shape = loaded.shape
    settings.validate(shape)
    if layer is None:
        layer = layer_attention(loaded, encoding, settings, keep_weights=False)
    projected = layer.projected
    if projected is None:
        with torch.inference_mode():
            projected = _as_numpy(_heads_read(loaded, settings, _project(loaded, encoding, settings)))  # (B, T, nh·d)
    split = {letter: _heads_of(value, layer.num_heads) for letter, value in projected.items()}  # (B, nh, T, d)
    steps = list(_shared_steps(loaded, encoding, layer, projected, split))
    first_of_heads = next(index for index, step in enumerate(steps) if step.stage == "heads")
    return Trace(
        settings=settings,
        tokens=encoding.tokens,
        num_heads=layer.num_heads,
        head_size=layer.head_size,
        divisor=layer.divisor,
        mask_kind=layer.mask_kind,
        dropped_tokens=encoding.dropped_tokens,
        steps=(*steps[:first_of_heads], *_head_steps(shape, encoding, layer, settings, split), *steps[first_of_heads:]),
    )


def _head_steps(shape: ModelShape, encoding: Encoding, layer: LayerAttention, settings: TraceSettings,
                split: dict[str, np.ndarray]) -> list[Step]:
    """The steps of head settings.head alone: its Q, K and V (as the heads read them: turned, shared), then its
    attention stage by stage."""
    head = settings.head
    steps: list[Step] = []

    def record(name: str, formula: str, value: torch.Tensor) -> torch.Tensor:
        steps.append(Step(name, "head", formula, value.numpy()))
        return value

    with torch.inference_mode():
        query, key, value = (
            record(letter, head_formula(settings, letter, shape),
                   readable_tensor(split[letter][:, head]))  # (B, T, d)
            for letter in "QKV"
        )
        mask = masks.additive(layer.mask_kind, torch.from_numpy(encoding.attention_mask),
                              settings.window)  # (B, 1 or T, T)
        stages = attend(query, key, value, mask, layer.divisor, settings.similarity)
        record("scores", scores_formula(settings), stages.scores)  # (B, T, T)
        record("scaled", scaled_formula(settings, layer.head_size), stages.scaled)  # (B, T, T)
        record("masked", masked_formula(layer.mask_kind, settings.window), stages.masked)  # (B, T, T)
        record("weights", "softmax(masked, dim=-1)", stages.weights)  # (B, T, T)
        record("context", "weights · V", stages.context)  # (B, T, d)
    return steps


def _shared_steps(loaded: LoadedModel, encoding: Encoding, layer: LayerAttention, projected: dict[str, np.ndarray],
                  split: dict[str, np.ndarray]) -> tuple[Step, ...]:
    """The steps of a trace that every head of the layer shares, in order: the inputs, the embeddings, the
    layer's input, the projections of every head, then every head's context and what is made of them.
    A trace puts its own head's steps between the projections and every head's context."""
    settings = layer.settings
    steps: list[Step] = []

    def record(name: str, stage: str, formula: str, value: torch.Tensor | np.ndarray) -> torch.Tensor | np.ndarray:
        steps.append(Step(name, stage, formula, value if isinstance(value, np.ndarray) else value.numpy()))
        return value

    family, model = loaded.family, loaded.model
    inputs = {"input_ids": encoding.input_ids, "token_type_ids": encoding.token_type_ids,
              "attention_mask": encoding.attention_mask}  # (B, T) each
    with torch.inference_mode():
        for name, formula in family.input_steps:
            record(name, "inputs", formula, inputs[name])  # (B, T)
        family.embed(model, torch.from_numpy(encoding.input_ids), torch.from_numpy(encoding.token_type_ids),
                     record)  # (B, T, C)
        residual = torch.from_numpy(encoding.layer_input(settings.layer))  # (B, T, C)
        record("layer_input", "embeddings", family.layer_input_formula(settings.layer),
               family.attention_input(model, settings.layer, residual))  # (B, T, C): X, what Q, K and V read
        if turns_by_position(loaded.shape, settings) or shares_heads(loaded.shape, settings):
            _rotary_steps(record, loaded, settings, _project(loaded, encoding, settings), split)
        else:
            for letter in "QKV":
                record(f"{letter} (all heads)", "projections", projection_formula(settings, letter),
                       projected[letter])  # (B, T, nh·d)
                record(f"{letter} split", "projections", "view(B, T, nh, d).transpose(1, 2)",
                       split[letter])  # (B, nh, T, d)
        record("context (all heads)", "heads", "softmax(mask(Q Kᵀ / s)) · V for every head", layer.context)
        record("concat", "heads", "concatenate heads: transpose(1, 2).reshape(B, T, nh·d)",
               layer.concat)  # (B, T, nh·d)
        projections = projections_for(loaded, settings)
        projected = record("output", "heads", output_formula(settings),
                           _apply(projections.output, readable_tensor(layer.concat)))  # (B, T, C)
        if settings.source == "bert":
            record("attention output", "heads", family.attention_output_formula,
                   family.attention_output(model, settings.layer, projected, residual))  # (B, T, C)
    return tuple(steps)


def _rotary_steps(record, loaded: LoadedModel, settings: TraceSettings, raw: dict[str, torch.Tensor],
                  split: dict[str, np.ndarray]) -> None:
    """The projection steps of a model whose positions turn q and k (RoPE) or whose query heads share key and
    value heads (GQA): Q with nh heads, K and V with n_kv; q and k turned; each query head's shared K and V.
    raw: the projections before any of it, (B, T, nh·d) and (B, T, n_kv·d); split: (B, nh, T, d) as the heads read
    them (LayerAttention.projected)."""
    shape = loaded.shape
    num_heads, kv_heads = settings.num_heads(shape), settings.num_kv_heads(shape)
    heads = {"Q": num_heads, "K": kv_heads, "V": kv_heads}
    separate = {}
    for letter in "QKV":
        record(f"{letter} (all heads)", "projections", projection_formula(settings, letter),
               raw[letter])  # (B, T, nh·d) for Q, (B, T, n_kv·d) for K and V
        separate[letter] = record(f"{letter} split", "projections", split_formula(settings, shape, letter),
                                  split_heads(raw[letter], heads[letter]))  # (B, nh or n_kv, T, d)
    if turns_by_position(shape, settings):
        rotation = rotation_for(loaded, settings, raw["Q"].shape[1])
        angles, turned_q, turned_k = (formula for _, formula in rotary_formulas(shape))
        record("RoPE angles", "projections", angles, rotation.angles)  # (T, d/2)
        record("Q rotated", "projections", turned_q, rotation.rotate(separate["Q"]))  # (B, nh, T, d)
        separate["K"] = record("K rotated", "projections", turned_k, rotation.rotate(separate["K"]))  # (B, n_kv, T, d)
    if shares_heads(shape, settings):
        mapping, repeated_k, repeated_v = (formula for _, formula in grouped_formulas(shape, settings))
        record("shared head of each query head", "projections", mapping,
               np.arange(num_heads) // (num_heads // kv_heads))  # (nh,): query head h reads shared head h // g
        record("K repeated", "projections", repeated_k, split["K"])  # (B, nh, T, d): repeat_kv(K rotated)
        record("V repeated", "projections", repeated_v, split["V"])  # (B, nh, T, d): repeat_kv(V split)


def rotation_for(loaded: LoadedModel, settings: TraceSettings, tokens: int) -> Rotation:
    """How `tokens` positions turn the q and k of settings' heads, which turn by position (turns_by_position): the
    model's own RoPE for its trained heads; for random heads the same RoPE (its base, its type) at their head size d,
    θ_i = base^(−2i/d) for plain RoPE."""
    random_size = settings.head_size(loaded.shape) if settings.source == "random" else None
    return loaded.family.rotation(loaded.model, tokens, head_size=random_size)  # angles (T, d/2)


def projections_as_read(loaded: LoadedModel, encoding: Encoding, settings: TraceSettings) -> dict[str, torch.Tensor]:
    """"Q", "K", "V" of layer settings.layer as its heads read them, (B, T, nh·d) each (LayerAttention.projected)."""
    return _heads_read(loaded, settings, _project(loaded, encoding, settings))


def _heads_read(loaded: LoadedModel, settings: TraceSettings, raw: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """"Q", "K", "V" as the heads read them, (B, T, nh·d) each: raw itself, or under RoPE q and k turned by
    position, and under grouped-query attention each of the n_kv key and value heads repeated for the query heads
    that share it (raw's K and V are (B, T, n_kv·d))."""
    shape = loaded.shape
    turned, shared = turns_by_position(shape, settings), shares_heads(shape, settings)
    if not (turned or shared):
        return raw
    num_heads, kv_heads = settings.num_heads(shape), settings.num_kv_heads(shape)
    query = split_heads(raw["Q"], num_heads)  # (B, nh, T, d)
    key, value = split_heads(raw["K"], kv_heads), split_heads(raw["V"], kv_heads)  # (B, n_kv, T, d) each
    if turned:
        rotation = rotation_for(loaded, settings, query.shape[2])
        query, key = rotation.rotate(query), rotation.rotate(key)  # (B, nh, T, d), (B, n_kv, T, d)
    key, value = repeat_kv(key, num_heads), repeat_kv(value, num_heads)  # (B, nh, T, d) each
    return {"Q": merge_heads(query), "K": merge_heads(key), "V": merge_heads(value)}  # (B, T, nh·d) each


def _project(loaded: LoadedModel, encoding: Encoding, settings: TraceSettings) -> dict[str, torch.Tensor]:
    """"Q", "K", "V": the layer's input projected, (B, T, nh·d) each (the input itself for identity); K and V
    (B, T, n_kv·d) under grouped-query attention."""
    projections = projections_for(loaded, settings)
    residual = torch.from_numpy(encoding.layer_input(settings.layer))  # (B, T, C)
    layer_input = loaded.family.attention_input(loaded.model, settings.layer, residual)  # (B, T, C): X
    return {letter: _apply(linear, layer_input)  # (B, T, nh·d)
            for letter, linear in (("Q", projections.query), ("K", projections.key), ("V", projections.value))}


def projections_for(loaded: LoadedModel, settings: TraceSettings) -> Projections:
    """The weights of settings.source: none (identity), drawn from the seed (random), or the model's trained ones."""
    if settings.source == "identity":
        return Projections(None, None, None, None)
    if settings.source == "random":
        return random_projections(loaded.shape.hidden_size, settings.head_size(loaded.shape),
                                  settings.num_heads(loaded.shape), settings.seed)
    return loaded.family.projections(loaded.model, settings.layer)


def _as_numpy(tensors: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """The tensors as numpy, one array for a tensor under several names (identity: Q, K and V are X), so
    that a pickle holds it once."""
    arrays = {id(tensor): tensor.numpy() for tensor in tensors.values()}
    return {name: arrays[id(tensor)] for name, tensor in tensors.items()}


def readable_tensor(array: np.ndarray) -> torch.Tensor:
    """A tensor to read array through: over its memory when it may be written, else over a copy. A layer's arrays
    are read-only (LayerAttention), and torch, whose tensors cannot be, warns that writing into one over them would
    be undefined; what is copied here is small beside what is computed from it (a head's slice, a mask, the
    concatenation its output projection reads)."""
    return torch.from_numpy(array if array.flags.writeable else array.copy())


def _heads_of(side_by_side: np.ndarray, num_heads: int) -> np.ndarray:
    """(B, T, nh·d) -> (B, nh, T, d), a view: split_heads for numpy."""
    batch, tokens, width = side_by_side.shape
    return side_by_side.reshape(batch, tokens, num_heads, width // num_heads).transpose(0, 2, 1, 3)


def _apply(linear: Linear | None, inputs: torch.Tensor) -> torch.Tensor:
    return inputs if linear is None else linear(inputs)

