"""Llama: a decoder whose tokens look back only, with RMSNorm before attention, RoPE on q and k, and key and
value heads shared by groups of query heads (grouped-query attention).

What differs from GPT-2, the other decoder (families/gpt2.py):
- no position is added to the embeddings: each layer turns its q and k by their token's position (RoPE,
  attention.stages.rotary), after the projections and before the scores;
- nh query heads read n_kv < nh key and value heads, each shared by nh / n_kv query heads (SmolLM2-135M: 9 and 3;
  n_kv = 1 is multi-query attention): W_K and W_V are (n_kv·d, C), and query head h reads shared head h // (nh/n_kv)
  (transformers' repeat_kv);
- the attention reads input_layernorm of the layer's input, an RMSNorm (x / √(mean(x²) + ε) · g: no mean taken
  off, no bias), and the block hands on W_O's output plus that input, as GPT-2's does;
- W_Q, W_K, W_V and W_O are torch.nn.Linear modules, by default without biases.
The first token takes whatever weight a head spends nowhere else: the attention sink, strong in a trained Llama.

Covered, as transformers' own classes with eager attention: "llama" (LlamaModel: Llama 2 and 3, SmolLM, SmolLM2,
TinyLlama), "qwen2" (Qwen2Model: its attention is Llama's with biases on q, k and v) and "mistral" (MistralModel:
Llama's attention, with a sliding window that reaches past the 512 tokens read here). Refused, with the reason
(ValueError from check_config): a sliding window shorter than 512 tokens or on some layers only (Qwen2 with
use_sliding_window), a head size other than C / nh, a RoPE whose frequencies change with the text's length
(dynamic, longrope), and every other model type (Qwen3 and Gemma normalise q and k, Phi-3 fuses q, k and v,
Llama 4 mixes in chunked attention): they are not this module's attention.

Shapes: B batch, T tokens, C hidden size, nh query heads, n_kv key/value heads, d head size, V vocabulary.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from attention.models.families.base import BlockParts, Family, ReferenceAttention, unrecorded
from attention.models.families.next_token import next_token_head
from attention.stages.dot_product import attend_in_chunks, merge_heads, split_heads
from attention.stages.masks import additive
from attention.stages.projections import Linear, Projections
from attention.stages.rotary import Rotation, repeat_kv
from attention.stages.settings import scaling_divisor

READ_TOKENS = 512  # the most tokens the core reads (attention.models.loading.MAX_TOKENS): a longer window is none
# RoPE types whose frequencies depend on how long the text is: a trace of one text would turn q and k otherwise
# than the same model on another length
LENGTH_DEPENDENT_ROPE = ("dynamic", "longrope")
SENTENCEPIECE_SPACE = "▁"  # Llama 2's and Mistral's mark a leading space so; Llama 3's and SmolLM's are byte-level


class LlamaFamily(Family):
    name = "llama"
    label = "Llama"
    reads = "a decoder: every token looks back only, positions turn q and k"
    sink_words = "the first token"
    first_token = "the first token"
    separator = None
    own_mask = "causal"
    reads_pairs = False
    byte_level = True  # SmolLM2's and Llama 3's; a SentencePiece tokenizer's "▁" is read in readable()
    rotates = True
    model_class_name = "LlamaModel"
    # float32 whatever the checkpoint is stored in (SmolLM2's Hub weights are bfloat16): the core computes in float32
    load_kwargs = {"dtype": torch.float32}
    input_steps = (
        ("input_ids", "tokenizer(text)"),
        ("attention_mask", "1 for a token, 0 for padding"),
    )
    embedding_steps = (
        ("token embeddings", "E_token[input_ids]"),
        ("embeddings", "token embeddings alone: no position is added, RoPE turns q and k"),
    )
    attention_output_formula = "output + layer input (the residual stream)"
    lm_head_prefix = "lm_head."
    special_tokens = {}  # a Llama's tokenizer files name its own (<s>, <|begin_of_text|>, <|im_end|>, …)

    def check_config(self, config) -> None:
        heads, kv_heads, hidden = config.num_attention_heads, self.num_kv_heads(config), config.hidden_size
        head_dim = getattr(config, "head_dim", None) or hidden // heads
        if head_dim * heads != hidden:
            raise ValueError(f"its heads are {head_dim} wide, and {heads} of them make {head_dim * heads}, not its "
                             f"hidden size {hidden}; the core dissects heads of C / nh numbers only")
        if heads % kv_heads:
            raise ValueError(f"its {heads} query heads cannot share {kv_heads} key/value heads evenly")
        rope_type = (getattr(config, "rope_parameters", None) or {}).get("rope_type", "default")
        if rope_type in LENGTH_DEPENDENT_ROPE:
            raise ValueError(f"its RoPE ({rope_type}) turns q and k by angles that change with the text's length; "
                             "the core dissects RoPE of fixed frequencies (default, linear, llama3, yarn)")
        window = getattr(config, "sliding_window", None)
        layer_types = set(getattr(config, "layer_types", None) or ())
        if layer_types - {"full_attention"} or (window is not None and window < READ_TOKENS):
            raise ValueError(f"its attention looks back a sliding window of {window} tokens (on some layers or all); "
                             f"the core dissects attention that sees every earlier token of the {READ_TOKENS} it reads")

    def num_kv_heads(self, config) -> int:
        return getattr(config, "num_key_value_heads", None) or config.num_attention_heads

    def rotation(self, model, tokens: int, head_size: int | None = None) -> Rotation:
        """head_size: of a head other than the model's (the toys' random heads): the model's own RoPE, its base and
        its type, built by transformers for heads of that size; for plain RoPE θ_i = base^(−2i/d) at that d."""
        rotary = model.rotary_emb  # the model's own frequencies, scaled as its RoPE type says (llama3, yarn, …)
        if head_size is not None and head_size != 2 * rotary.inv_freq.shape[0]:
            config = copy.deepcopy(model.config)  # rope_parameters (rope_type, rope_theta) kept, the head resized
            config.head_dim = head_size
            rotary = type(rotary)(config)  # transformers' own rotary embedding for heads of head_size numbers
        return Rotation.of(rotary.inv_freq, tokens, float(rotary.attention_scaling))  # angles (T, d/2)

    def readable(self, tokens: list[str]) -> tuple[str, ...]:
        if any(token.startswith(SENTENCEPIECE_SPACE) for token in tokens):  # SentencePiece: letters already
            return tuple(token.replace(SENTENCEPIECE_SPACE, "␣") for token in tokens)
        return super().readable(tokens)

    def sinks(self, special_tokens_mask: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        first = np.zeros(attention_mask.shape, dtype=bool)  # (B, T)
        first[:, 0] = True
        return first

    def forward(self, model, input_ids, token_type_ids, attention_mask):
        outputs = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        # L + 1 x (B, T, C): the embeddings, then each layer's output (the last after the final RMSNorm, read by none)
        return outputs.hidden_states

    def embed(self, model, input_ids, token_type_ids, record=unrecorded):
        words = record("token embeddings", "embeddings", self.embedding_steps[0][1],
                       model.embed_tokens(input_ids))  # (B, T, C)
        return record("embeddings", "embeddings", self.embedding_steps[1][1], words)  # (B, T, C): no position added

    def layer_input_formula(self, layer: int) -> str:
        read = "embeddings" if layer == 0 else f"output of layer {layer - 1}"
        return f"X = RMSNorm({read}) = x / √(mean(x²) + ε) · g"

    def attention_input(self, model, layer, residual):
        return model.layers[layer].input_layernorm(residual)  # (B, T, C): pre-RMSNorm

    def projections(self, model, layer):
        attention = model.layers[layer].self_attn
        return Projections(
            query=_linear(attention.q_proj),  # (nh·d, C)
            key=_linear(attention.k_proj),  # (n_kv·d, C)
            value=_linear(attention.v_proj),  # (n_kv·d, C)
            output=_linear(attention.o_proj),  # (C, nh·d)
        )

    def attention_output(self, model, layer, output, residual):
        return output + residual  # (B, T, C): the block's first residual connection

    def run_layer(self, model, layer, hidden, attention_mask):
        positions = torch.arange(hidden.shape[1])[None, :]  # (1, T)
        output = model.layers[layer](hidden, attention_mask=_causal_mask(model, hidden, attention_mask),
                                     position_ids=positions,
                                     position_embeddings=model.rotary_emb(hidden, positions))  # (B, T, C)
        return output[0] if isinstance(output, tuple) else output

    def reference(self, model, layer, residual, attention_mask):
        import importlib

        modeling = importlib.import_module(type(model).__module__)  # modeling_llama, modeling_qwen2, …
        attention = model.layers[layer].self_attn
        hidden = model.layers[layer].input_layernorm(residual)  # (B, T, C)
        mask = _causal_mask(model, hidden, attention_mask)  # (B, 1, T, T), as the model's forward makes it
        positions = torch.arange(hidden.shape[1])[None, :]  # (1, T)
        cos, sin = model.rotary_emb(hidden, positions)  # (1, T, d) each
        batch, tokens, _ = hidden.shape
        # (B, nh, T, d) for q, (B, n_kv, T, d) for k and v
        query, key, value = (projection(hidden).view(batch, tokens, -1, attention.head_dim).transpose(1, 2)
                             for projection in (attention.q_proj, attention.k_proj, attention.v_proj))
        query, key = modeling.apply_rotary_pos_emb(query, key, cos, sin)
        context, weights = modeling.eager_attention_forward(attention, query, key, value, mask,
                                                            scaling=attention.scaling)  # (B, T, nh, d), (B, nh, T, T)
        output, _ = attention(hidden, position_embeddings=(cos, sin), attention_mask=mask)  # (B, T, C): o_proj
        return ReferenceAttention(weights=weights, context=context.reshape(batch, tokens, -1),
                                  attention_output=output + residual)

    def layer_with_heads_off(self, model, layer, hidden, attention_mask, keep):
        block = model.layers[layer]
        shape = self.shape(model.config)
        attention_input = block.input_layernorm(hidden)  # (B, T, C): X, pre-RMSNorm
        attention = block.self_attn
        rotation = self.rotation(model, hidden.shape[1])
        query = rotation.rotate(split_heads(attention.q_proj(attention_input), shape.num_heads))  # (B, nh, T, d)
        key = rotation.rotate(split_heads(attention.k_proj(attention_input), shape.kv_heads))  # (B, n_kv, T, d)
        value = split_heads(attention.v_proj(attention_input), shape.kv_heads)  # (B, n_kv, T, d)
        key, value = repeat_kv(key, shape.num_heads), repeat_kv(value, shape.num_heads)  # (B, nh, T, d) each
        mask = additive(self.own_mask, attention_mask)  # (B, T, T): causal, padding keys masked too
        context = attend_in_chunks(query, key, value, mask, scaling_divisor("sqrt", shape.head_size))  # (B, nh, T, d)
        context = context * keep[:, :, None, None]  # (B, nh, T, d): switched-off heads at 0
        attention_output = attention.o_proj(merge_heads(context)) + hidden  # (B, T, C): W_O·concat + residual
        return attention_output, attention_output + block.mlp(block.post_attention_layernorm(attention_output))

    def block_parts(self, model, layer):
        block = model.layers[layer]
        return BlockParts(placement="pre", norm_name="RMSNorm", attention_norm=block.input_layernorm,
                          mlp_norm=block.post_attention_layernorm, mlp=block.mlp,
                          mlp_formula="W_down · (SiLU(W_gate · x) ⊙ (W_up · x))")

    def language_model_head(self, model, tokenizer, weights):
        return next_token_head(model, weights, "embed_tokens", "norm", "a checkpoint saved from LlamaForCausalLM "
                               "as safetensors (a GGUF's untied decoder is not read)")


class Qwen2Family(LlamaFamily):
    """Qwen2 and Qwen2.5: Llama's attention with biases on q, k and v (not on W_O), read the same way."""

    name = "qwen2"
    label = "Qwen2"
    model_class_name = "Qwen2Model"


class MistralFamily(LlamaFamily):
    """Mistral: Llama's attention; its sliding window (4,096 tokens) reaches past every text read here."""

    name = "mistral"
    label = "Mistral"
    model_class_name = "MistralModel"


def _causal_mask(model, hidden: torch.Tensor, attention_mask: torch.Tensor):
    """What the model's forward hands every layer: the causal mask with the padding's keys masked too."""
    from transformers.masking_utils import create_causal_mask

    positions = torch.arange(hidden.shape[1])[None, :]  # (1, T)
    return create_causal_mask(config=model.config, inputs_embeds=hidden, attention_mask=attention_mask,
                              past_key_values=None, position_ids=positions)


def _linear(module: torch.nn.Linear) -> Linear:
    """The module's weight and bias as the core's Linear; a Linear without bias (a Llama's) gets zeros, which
    leave x · Wᵀ as it is, bit for bit."""
    weight = module.weight.detach()  # (out, in)
    bias = module.bias.detach() if module.bias is not None else torch.zeros(weight.shape[0], dtype=weight.dtype)
    return Linear(weight, bias)  # bias (out,)


LLAMA = LlamaFamily()
QWEN2 = Qwen2Family()
MISTRAL = MistralFamily()
