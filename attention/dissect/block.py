"""The block around the heads: one whole layer of any family as named steps, past the attention layer.

A layer is the residual stream in, attention, an add, an MLP and a second add, with a norm before each sublayer
(pre-norm: GPT-2, Llama) or after each add (post-norm: BERT). Where the norms sit is the family's answer
(Family.block_parts); the attention is the trace's own (every head of layer_attention, then W_O), so this block
and the head the page dissects are the same numbers. tests/core/test_block.py holds the block's output equal to
transformers' own layer output (hidden_states[ℓ + 1]).

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attention.dissect.trace import LayerAttention, Step, layer_attention, projections_for, readable_tensor
from attention.models.loading import LoadedModel
from attention.stages.settings import TraceSettings
from attention.text.encoding import Encoding

STAGE = "block"  # every step's stage, beside the trace's inputs, embeddings, projections, head, heads
# Where the norm sits, in words, by Block.placement; {norm} is the family's norm (Block.norm_name).
PLACEMENT_WORDS = {
    "post": "after each add (post-norm, as in the original transformer): x + attention is normed before the MLP "
            "reads it, and x + MLP before the next layer does, so the stream the next layer reads is always normed",
    "pre": "before each sublayer (pre-norm): Q, K and V read {norm}(x) and the MLP reads {norm}(h), while the adds "
           "write into the un-normed stream, which grows from layer to layer",
}


@dataclass(frozen=True, eq=False)
class Block:
    """One layer's steps on a text, in the order the layer runs them; the last step's value is the layer's output."""

    layer: int
    placement: str  # "post" (add, then norm) or "pre" (norm, then sublayer, then add)
    norm_name: str  # "LayerNorm" or "RMSNorm"
    tokens: tuple[tuple[str, ...], ...]
    steps: tuple[Step, ...]

    def __getitem__(self, name: str) -> np.ndarray:
        for step in self.steps:
            if step.name == name:
                return step.value
        raise KeyError(f"no step {name!r}; the steps are {', '.join(self.names)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(step.name for step in self.steps)

    @property
    def output(self) -> np.ndarray:
        """(B, T, C) what the layer hands on: the next layer's input."""
        return self.steps[-1].value

    def written(self) -> dict[str, np.ndarray]:
        """How much each sublayer wrote into each token's vector against what the residual stream carried:
        {name: (B, T) Euclidean norms} of the stream in, the attention's output, the stream after the first add
        (what the MLP's add is measured against) and the MLP's output. Post-norm streams are read after their norm."""
        after_attention = self["attention norm"] if self.placement == "post" else self["add attention"]
        return {name: np.linalg.norm(value, axis=-1) for name, value in (  # (B, T) each
            ("residual in", self["residual in"]), ("attention", self["attention"]),
            ("residual after attention", after_attention), ("MLP", self["MLP"]))}


def build_block(loaded: LoadedModel, encoding: Encoding, layer: int,
                attention: LayerAttention | None = None) -> Block:
    """Layer `layer` of loaded's model on the encoded text, step by step. attention: layer_attention of that
    layer with the model's own settings, if at hand (its weights need not be kept)."""
    shape = loaded.shape
    settings = TraceSettings(layer=layer).validate(shape)  # ValueError naming the valid layers
    if attention is None:
        attention = layer_attention(loaded, encoding, settings, keep_weights=False)
    family, model = loaded.family, loaded.model
    parts = family.block_parts(model, layer)
    norm = parts.norm_name
    read = "the embeddings" if layer == 0 else f"the output of layer {layer - 1}"
    steps: list[Step] = []

    def record(name: str, formula: str, value: torch.Tensor) -> torch.Tensor:
        steps.append(Step(name, STAGE, formula, value.numpy()))
        return value

    with torch.inference_mode():
        residual = record("residual in", f"x = {read}",
                          torch.from_numpy(encoding.layer_input(layer)))  # (B, T, C)
        if parts.placement == "pre":
            record("attention norm", f"{norm}(x): what Q, K and V read",
                   parts.attention_norm(residual))  # (B, T, C), the trace's layer_input
        heads_read = "the normed x" if parts.placement == "pre" else "x"
        output = projections_for(loaded, settings).output
        attended = record("attention", f"W_O · concat(every head's context of {heads_read}) + b_O",
                          output(readable_tensor(attention.concat)))  # (B, T, C)
        stream = record("add attention", "x + attention", residual + attended)  # (B, T, C)
        if parts.placement == "post":
            stream = record("attention norm", f"h = {norm}(x + attention)", parts.attention_norm(stream))  # (B, T, C)
            mlp_out = record("MLP", f"{parts.mlp_formula}, of h", parts.mlp(stream))  # (B, T, C)
            added = record("add MLP", "h + MLP", stream + mlp_out)  # (B, T, C)
            record("MLP norm", f"{norm}(h + MLP): the layer's output", parts.mlp_norm(added))  # (B, T, C)
        else:
            normed = record("MLP norm", f"{norm}(h), with h = x + attention", parts.mlp_norm(stream))  # (B, T, C)
            mlp_out = record("MLP", f"{parts.mlp_formula}, of {norm}(h)", parts.mlp(normed))  # (B, T, C)
            record("add MLP", "h + MLP: the layer's output", stream + mlp_out)  # (B, T, C)
    return Block(layer=layer, placement=parts.placement, norm_name=norm, tokens=encoding.tokens, steps=tuple(steps))
