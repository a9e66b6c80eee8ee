"""BERT: an encoder whose every token looks both ways (only padding is masked), post-LayerNorm.

A layer's attention reads the layer's input X itself; W_Q, W_K, W_V and W_O are torch.nn.Linear modules;
the attention block hands on LayerNorm(W_O · concat + X). [CLS] and [SEP] take up whatever weight a head
spends nowhere else. Shapes: B batch, T tokens, C hidden size, nh heads, d head size.
"""

from __future__ import annotations

import numpy as np
import torch

from attention.dot_product import additive_mask
from attention.families.base import Family, ReferenceAttention
from attention.projections import Linear, Projections


class BertFamily(Family):
    name = "bert"
    label = "BERT"
    reads = "an encoder: every token looks both ways"
    sink_words = "[CLS] and [SEP]"
    own_mask = "none"
    reads_pairs = True
    byte_level = False
    model_class_name = "BertModel"
    load_kwargs = {"add_pooling_layer": False}
    input_steps = (
        ("input_ids", "tokenizer(text)"),
        ("token_type_ids", "0 for sentence A, 1 for sentence B"),
        ("attention_mask", "1 for a token, 0 for padding"),
    )
    embedding_steps = (
        ("token embeddings", "E_token[input_ids]"),
        ("segment embeddings", "E_segment[token_type_ids]"),
        ("position embeddings", "E_position[0 … T−1]"),
        ("embeddings", "LayerNorm(token + segment + position)"),
    )
    attention_output_formula = "LayerNorm(output + X)"

    def sinks(self, special_tokens_mask: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        return special_tokens_mask & attention_mask.astype(bool)  # (B, T): [CLS] and [SEP], not [PAD]

    def forward(self, model, input_ids, token_type_ids, attention_mask):
        outputs = model(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
                        output_hidden_states=True)
        return outputs.hidden_states  # L + 1 x (B, T, C): embeddings, then each layer's output

    def embed(self, model, input_ids, token_type_ids, record):
        embeddings = model.embeddings
        positions = torch.arange(input_ids.shape[1])[None, :]  # (1, T)
        words = record("token embeddings", "embeddings", self.embedding_steps[0][1],
                       embeddings.word_embeddings(input_ids))  # (B, T, C)
        segments = record("segment embeddings", "embeddings", self.embedding_steps[1][1],
                          embeddings.token_type_embeddings(token_type_ids))  # (B, T, C)
        places = record("position embeddings", "embeddings", self.embedding_steps[2][1],
                        embeddings.position_embeddings(positions).expand_as(words))  # (B, T, C)
        # Summed in transformers' order, so that the float32 result is bit for bit the model's.
        return record("embeddings", "embeddings", self.embedding_steps[3][1],
                      embeddings.LayerNorm(words + segments + places))  # (B, T, C)

    def layer_input_formula(self, layer: int) -> str:
        return "X = embeddings" if layer == 0 else f"X = output of layer {layer - 1}"

    def attention_input(self, model, layer, residual):
        return residual  # (B, T, C): post-LayerNorm, so the layer's input is read as it is

    def projections(self, model, layer):
        attention = model.encoder.layer[layer].attention
        return Projections(
            query=_linear(attention.self.query),  # (nh·d, C)
            key=_linear(attention.self.key),  # (nh·d, C)
            value=_linear(attention.self.value),  # (nh·d, C)
            output=_linear(attention.output.dense),  # (C, nh·d)
        )

    def attention_output(self, model, layer, output, residual):
        return model.encoder.layer[layer].attention.output.LayerNorm(output + residual)  # (B, T, C)

    def run_layer(self, model, layer, hidden, attention_mask):
        from transformers.masking_utils import create_bidirectional_mask

        # What BertModel.forward hands every layer: None when no token is padding, else an additive mask.
        mask = create_bidirectional_mask(config=model.config, inputs_embeds=hidden, attention_mask=attention_mask)
        output = model.encoder.layer[layer](hidden, attention_mask=mask)  # (B, T, C)
        return output[0] if isinstance(output, tuple) else output

    def reference(self, model, layer, residual, attention_mask):
        attention = model.encoder.layer[layer].attention
        mask = additive_mask(attention_mask)[:, None]  # (B, 1, 1, T)
        context, weights = attention.self(residual, attention_mask=mask)  # (B, T, nh·d), (B, nh, T, T)
        return ReferenceAttention(weights=weights, context=context,
                                  attention_output=attention(residual, attention_mask=mask)[0])  # (B, T, C)


def _linear(module: torch.nn.Linear) -> Linear:
    return Linear(module.weight.detach(), module.bias.detach())


BERT = BertFamily()
