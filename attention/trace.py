"""One self-attention computation as an ordered list of named steps, each with its tensor.

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, d head size.
The trace reuses an Encoding's hidden states, so moving layer, head, head_dim or
scaling never runs the model again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attention.dot_product import additive_mask, attend, attend_in_chunks, merge_heads, split_heads
from attention.encoding import Encoding
from attention.models import LoadedModel
from attention.outline import scaled_formula, scores_formula
from attention.projections import Linear, projections_for
from attention.settings import TraceSettings


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


def build_trace(loaded: LoadedModel, encoding: Encoding, settings: TraceSettings,
                shared: tuple[Step, ...] | None = None) -> Trace:
    """Dissect layer settings.layer, head settings.head for an encoded batch.

    shared: layer_steps(loaded, encoding, settings), if at hand: what every head of the layer shares, so
    that another head of the same layer computes its own steps alone (a 472-token text: one head's
    attention instead of every head's again).
    """
    shape = loaded.shape
    settings.validate(shape)
    num_heads, head_size = settings.num_heads(shape), settings.head_size(shape)
    divisor = settings.divisor(shape)
    if shared is None:
        shared = layer_steps(loaded, encoding, settings)
    split = {step.name: step.value for step in shared if step.name.endswith(" split")}
    steps: list[Step] = []

    def record(name: str, stage: str, formula: str, value: torch.Tensor) -> torch.Tensor:
        steps.append(Step(name, stage, formula, value.numpy()))
        return value

    with torch.inference_mode():
        head = settings.head
        query, key, value = (
            record(letter, "head", f"{letter} = {letter} split[:, {head}]",
                   torch.from_numpy(split[f"{letter} split"])[:, head])  # (B, T, d)
            for letter in "QKV"
        )
        mask = additive_mask(torch.from_numpy(encoding.attention_mask))  # (B, 1, T)
        stages = attend(query, key, value, mask, divisor, settings.similarity)
        record("scores", "head", scores_formula(settings), stages.scores)  # (B, T, T)
        record("scaled", "head", scaled_formula(settings, head_size), stages.scaled)  # (B, T, T)
        record("masked", "head", "scaled + (−∞ at padding keys)", stages.masked)  # (B, T, T)
        record("weights", "head", "softmax(masked, dim=-1)", stages.weights)  # (B, T, T)
        record("context", "head", "weights · V", stages.context)  # (B, T, d)

    first_of_heads = next(index for index, step in enumerate(shared) if step.stage == "heads")
    return Trace(
        settings=settings,
        tokens=encoding.tokens,
        num_heads=num_heads,
        head_size=head_size,
        divisor=divisor,
        dropped_tokens=encoding.dropped_tokens,
        steps=(*shared[:first_of_heads], *steps, *shared[first_of_heads:]),
    )


def layer_steps(loaded: LoadedModel, encoding: Encoding, settings: TraceSettings) -> tuple[Step, ...]:
    """The steps of a trace that every head of the layer shares, in order: the inputs, the embeddings, the
    layer's input, the projections of every head, then every head's context and what is made of them.
    A trace puts its own head's steps between the projections and every head's context."""
    shape = loaded.shape
    settings.validate(shape)
    num_heads, divisor = settings.num_heads(shape), settings.divisor(shape)
    steps: list[Step] = []

    def record(name: str, stage: str, formula: str, value: torch.Tensor) -> torch.Tensor:
        steps.append(Step(name, stage, formula, value.numpy()))
        return value

    with torch.inference_mode():
        input_ids = record("input_ids", "inputs", "tokenizer(text)", torch.from_numpy(encoding.input_ids))  # (B, T)
        token_type_ids = record("token_type_ids", "inputs", "0 for sentence A, 1 for sentence B",
                                torch.from_numpy(encoding.token_type_ids))  # (B, T)
        attention_mask = record("attention_mask", "inputs", "1 for a token, 0 for padding",
                                torch.from_numpy(encoding.attention_mask))  # (B, T)
        _record_embeddings(loaded, input_ids, token_type_ids, record)
        layer_input = record("layer_input", "embeddings",
                             "X = embeddings" if settings.layer == 0 else f"X = output of layer {settings.layer - 1}",
                             torch.from_numpy(encoding.layer_input(settings.layer)))  # (B, T, C)

        projections = projections_for(loaded, settings)
        heads: dict[str, torch.Tensor] = {}
        for letter, linear in (("Q", projections.query), ("K", projections.key), ("V", projections.value)):
            w = letter.lower()
            projected = record(f"{letter} (all heads)", "projections", f"X · W_{w}ᵀ + b_{w}",
                               _apply(linear, layer_input))  # (B, T, nh·d)
            heads[letter] = record(f"{letter} split", "projections", "view(B, T, nh, d).transpose(1, 2)",
                                   split_heads(projected, num_heads))  # (B, nh, T, d)
        mask = additive_mask(attention_mask)  # (B, 1, T)
        contexts = attend_in_chunks(heads["Q"], heads["K"], heads["V"], mask, divisor,
                                    settings.similarity)  # (B, nh, T, d)
        if settings.heads_off:
            keep = torch.ones(num_heads)
            keep[list(settings.heads_off)] = 0.0
            contexts = contexts * keep[None, :, None, None]  # (B, nh, T, d) switched-off heads at 0
        record("context (all heads)", "heads", "softmax(mask(Q Kᵀ / s)) · V for every head", contexts)
        concat = record("concat", "heads", "concatenate heads: transpose(1, 2).reshape(B, T, nh·d)",
                        merge_heads(contexts))  # (B, T, nh·d)
        projected = record("output", "heads", "concat · W_oᵀ + b_o", _apply(projections.output, concat))  # (B, T, C)
        if settings.source == "bert":
            self_output = loaded.model.encoder.layer[settings.layer].attention.output
            record("attention output", "heads", "LayerNorm(output + X)",
                   self_output.LayerNorm(projected + layer_input))  # (B, T, C)
    return tuple(steps)


def _record_embeddings(loaded: LoadedModel, input_ids, token_type_ids, record) -> None:
    embeddings = loaded.model.embeddings
    positions = torch.arange(input_ids.shape[1])[None, :]  # (1, T)
    words = record("token embeddings", "embeddings", "E_token[input_ids]",
                   embeddings.word_embeddings(input_ids))  # (B, T, C)
    segments = record("segment embeddings", "embeddings", "E_segment[token_type_ids]",
                      embeddings.token_type_embeddings(token_type_ids))  # (B, T, C)
    places = record("position embeddings", "embeddings", "E_position[0 … T−1]",
                    embeddings.position_embeddings(positions).expand_as(words))  # (B, T, C)
    # Summed in transformers' order, so that the float32 result is bit for bit the model's.
    record("embeddings", "embeddings", "LayerNorm(token + segment + position)",
           embeddings.LayerNorm(words + segments + places))  # (B, T, C)


def _apply(linear: Linear | None, inputs: torch.Tensor) -> torch.Tensor:
    return inputs if linear is None else linear(inputs)

