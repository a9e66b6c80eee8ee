"""A layer's input made from the layer before it: one layer run on what is at hand, not the whole model.

A page on layer L of a long text keeps that layer's input only (a student of a class moves from layer to
layer, and every layer's input of every text would not fit). A move to layer L + 1 then runs layer L on it,
a sixth of a forward pass on a 6-layer model, and a move to layer 0 only looks the embeddings up. The
modules, the mask and their order are the model's own, so the numbers are bit for bit those of its forward
pass (tests/core/test_layer_inputs.py). Shapes: B batch, T tokens, C hidden size.
"""

from __future__ import annotations

import dataclasses

import torch

from attention.models.loading import LoadedModel
from attention.text.encoding import Encoding


def next_layer_input(loaded: LoadedModel, encoding: Encoding, layer: int) -> Encoding:
    """encoding with the input of `layer` kept, and only it: the embeddings for layer 0 (from the ids alone),
    else layer - 1 run on its input, which encoding must keep (ValueError naming the layers it keeps)."""
    num_layers = loaded.shape.num_layers
    if not 0 <= layer <= num_layers:
        raise ValueError(f"layer must be from 0 to {num_layers}; got {layer}")
    model, family = loaded.model, loaded.family
    with torch.inference_mode():
        if layer == 0:
            hidden = family.embed(model, torch.from_numpy(encoding.input_ids),
                                  torch.from_numpy(encoding.token_type_ids))  # (B, T, C)
        else:
            hidden = family.run_layer(model, layer - 1, torch.from_numpy(encoding.layer_input(layer - 1)),
                                      torch.from_numpy(encoding.attention_mask))  # (B, T, C)
    kept = [None] * (num_layers + 1)
    kept[layer] = hidden.numpy()
    return dataclasses.replace(encoding, hidden_states=tuple(kept))
