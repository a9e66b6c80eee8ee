"""GPT-2: a decoder whose tokens look back only (the causal mask), pre-LayerNorm.

A layer's attention reads ln_1 of the layer's input, not the input itself, and the block hands on W_O's
output plus that input (the residual stream), with no LayerNorm after. Q, K and V come from one fused
Conv1D, c_attn, that stores its weight as (in, out): y = x · W + b, the transpose of torch.nn.Linear's
(out, in), so W_Q, W_K and W_V are its columns, transposed (nanoGPT's from_pretrained names the same
transposition). With nothing to look back at, the first token takes whatever weight a head spends nowhere
else: the attention sink. Its language-model head guesses the token after the text: the last layer's output
through the final LayerNorm ln_f, then scored against the word embeddings wte (tied, as gpt2's are; a checkpoint
saved untied keeps its own lm_head.weight). Shapes: B batch, T tokens, C hidden size, nh heads, d head size,
V vocabulary.
"""

from __future__ import annotations

import numpy as np
import torch

from attention.models.families.base import BlockParts, Family, ReferenceAttention, unrecorded
from attention.models.families.next_token import next_token_head
from attention.stages.dot_product import attend_in_chunks, merge_heads, split_heads
from attention.stages.masks import additive
from attention.stages.projections import Linear, Projections
from attention.stages.settings import scaling_divisor

END_OF_TEXT = "<|endoftext|>"  # GPT-2's one special token: beginning, end, unknown, and the padding of a batch


class GPT2Family(Family):
    name = "gpt2"
    label = "GPT-2"
    reads = "a decoder: every token looks back only"
    sink_words = "the first token"
    first_token = "the first token"
    separator = None
    own_mask = "causal"
    reads_pairs = False
    byte_level = True
    model_class_name = "GPT2Model"
    load_kwargs = {}
    input_steps = (
        ("input_ids", "tokenizer(text)"),
        ("attention_mask", "1 for a token, 0 for padding"),
    )
    embedding_steps = (
        ("token embeddings", "E_token[input_ids]"),
        ("position embeddings", "E_position[0 … T−1]"),
        ("embeddings", "token + position"),
    )
    attention_output_formula = "output + layer input (the residual stream)"
    lm_head_prefix = "lm_head."
    special_tokens = {"bos_token": END_OF_TEXT, "eos_token": END_OF_TEXT, "unk_token": END_OF_TEXT}

    def check_config(self, config) -> None:
        if not config.scale_attn_weights or config.scale_attn_by_inverse_layer_idx or config.add_cross_attention:
            raise ValueError("this GPT-2 checkpoint scales its scores otherwise than by √d_k or attends to an "
                             "encoder (cross-attention); the core dissects GPT-2's own self-attention only")

    def sinks(self, special_tokens_mask: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        first = np.zeros(attention_mask.shape, dtype=bool)  # (B, T)
        first[:, 0] = True
        return first

    def forward(self, model, input_ids, token_type_ids, attention_mask):
        # token_type_ids are not passed: GPT-2 would add their *word* embeddings to every token.
        outputs = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        # L + 1 x (B, T, C): the embeddings, then each layer's output; the last has ln_f applied, and no layer reads it.
        return outputs.hidden_states

    def embed(self, model, input_ids, token_type_ids, record=unrecorded):
        positions = torch.arange(input_ids.shape[1])[None, :]  # (1, T)
        words = record("token embeddings", "embeddings", self.embedding_steps[0][1], model.wte(input_ids))  # (B, T, C)
        places = record("position embeddings", "embeddings", self.embedding_steps[1][1],
                        model.wpe(positions).expand_as(words))  # (B, T, C)
        return record("embeddings", "embeddings", self.embedding_steps[2][1], words + places)  # (B, T, C)

    def layer_input_formula(self, layer: int) -> str:
        return "X = ln_1(embeddings)" if layer == 0 else f"X = ln_1(output of layer {layer - 1})"

    def attention_input(self, model, layer, residual):
        return model.h[layer].ln_1(residual)  # (B, T, C): pre-LayerNorm

    def projections(self, model, layer):
        attention = model.h[layer].attn
        width = attention.split_size  # nh·d = C
        fused = attention.c_attn.weight.detach().t()  # (3·nh·d, C): Conv1D's (in, out) turned into Linear's (out, in)
        bias = attention.c_attn.bias.detach()  # (3·nh·d,)
        query, key, value = (Linear(fused[i * width:(i + 1) * width], bias[i * width:(i + 1) * width])  # (nh·d, C)
                             for i in range(3))
        output = Linear(attention.c_proj.weight.detach().t(), attention.c_proj.bias.detach())  # (C, nh·d)
        return Projections(query=query, key=key, value=value, output=output)

    def attention_output(self, model, layer, output, residual):
        return output + residual  # (B, T, C): the block's first residual connection

    def run_layer(self, model, layer, hidden, attention_mask):
        output = model.h[layer](hidden, attention_mask=_causal_mask(model, hidden, attention_mask))  # (B, T, C)
        return output[0] if isinstance(output, tuple) else output

    def reference(self, model, layer, residual, attention_mask):
        from transformers.models.gpt2.modeling_gpt2 import eager_attention_forward

        attention = model.h[layer].attn
        hidden = model.h[layer].ln_1(residual)  # (B, T, C)
        mask = _causal_mask(model, hidden, attention_mask)  # (B, 1, T, T), as GPT2Model.forward makes it
        batch, tokens, _ = hidden.shape
        query, key, value = (projected.view(batch, tokens, -1, attention.head_dim).transpose(1, 2)  # (B, nh, T, d)
                             for projected in attention.c_attn(hidden).split(attention.split_size, dim=2))
        context, weights = eager_attention_forward(attention, query, key, value, mask,
                                                   scaling=attention.scaling)  # (B, T, nh, d), (B, nh, T, T)
        output, _ = attention(hidden, attention_mask=mask)  # (B, T, C): c_proj of the context
        return ReferenceAttention(weights=weights, context=context.reshape(batch, tokens, -1),
                                  attention_output=output + residual)

    def layer_with_heads_off(self, model, layer, hidden, attention_mask, keep):
        block = model.h[layer]
        shape = self.shape(model.config)
        attention_input = block.ln_1(hidden)  # (B, T, C): X, pre-LayerNorm
        query, key, value = (split_heads(projected, shape.num_heads)  # (B, nh, T, d)
                             for projected in block.attn.c_attn(attention_input).split(block.attn.split_size, dim=2))
        mask = additive(self.own_mask, attention_mask)  # (B, T, T): causal, padding keys masked too
        # A few heads at a time, as BERT's (families/bert.py): the head ranking runs nh copies of the text.
        context = attend_in_chunks(query, key, value, mask, scaling_divisor("sqrt", shape.head_size))  # (B, nh, T, d)
        context = context * keep[:, :, None, None]  # (B, nh, T, d): switched-off heads at 0
        attention_output = block.attn.c_proj(merge_heads(context)) + hidden  # (B, T, C): W_O·concat + residual
        return attention_output, attention_output + block.mlp(block.ln_2(attention_output))  # (B, T, C)

    def block_parts(self, model, layer):
        block = model.h[layer]
        return BlockParts(placement="pre", norm_name="LayerNorm", attention_norm=block.ln_1, mlp_norm=block.ln_2,
                          mlp=block.mlp, mlp_formula="W_proj · GELU(W_fc · x + b_fc) + b_proj")

    def language_model_head(self, model, tokenizer, weights):
        return next_token_head(model, weights, "wte", "ln_f",
                               "a GPT-2 saved from GPT2LMHeadModel (gpt2, distilgpt2)")


def _causal_mask(model, hidden: torch.Tensor, attention_mask: torch.Tensor):
    """What GPT2Model.forward hands every block: the causal mask with the padding's keys masked too."""
    from transformers.masking_utils import create_causal_mask

    positions = torch.arange(hidden.shape[1])[None, :]  # (1, T)
    return create_causal_mask(config=model.config, inputs_embeds=hidden, attention_mask=attention_mask,
                              past_key_values=None, position_ids=positions)


GPT2 = GPT2Family()
