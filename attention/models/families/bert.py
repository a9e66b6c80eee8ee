"""BERT: an encoder whose every token looks both ways (only padding is masked), post-LayerNorm.

A layer's attention reads the layer's input X itself; W_Q, W_K, W_V and W_O are torch.nn.Linear modules;
the attention block hands on LayerNorm(W_O · concat + X). [CLS] and [SEP] take up whatever weight a head
spends nowhere else. Its language-model head (BertForMaskedLM's cls.predictions) guesses the word behind a
[MASK]. Shapes: B batch, T tokens, C hidden size, nh heads, d head size, V vocabulary.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import torch

from attention.models.checkpoints import checkpoint_file, read_weights
from attention.models.families import bert_modules
from attention.models.families.base import (
    BlockParts,
    Family,
    LanguageModelHead,
    MissingHead,
    ReferenceAttention,
    unrecorded,
)
from attention.models.families.bert_config import BertConfig
from attention.stages.dot_product import additive_mask, attend_in_chunks, merge_heads, split_heads
from attention.stages.masks import additive
from attention.stages.projections import Linear, Projections
from attention.stages.settings import scaling_divisor

SUGGESTED_MODEL = "bert-base-uncased"  # a BERT saved with its masked-language-model head, on the Hub's allow-list
MLM_HEAD_PREFIX = "cls.predictions."  # BertForMaskedLM's head; missing from encoder-only checkpoints
# What a checkpoint must hold of the head; its decoder's weight and bias are the word embeddings and
# predictions.bias (tied), unless the checkpoint has its own.
MLM_HEAD_KEYS = tuple(f"{MLM_HEAD_PREFIX}{key}" for key in (
    "bias", "transform.dense.weight", "transform.dense.bias", "transform.LayerNorm.weight",
    "transform.LayerNorm.bias"))


@dataclass(frozen=True, eq=False)
class MaskedLMHead(LanguageModelHead):
    """BERT's masked-language-model head alone (cls.predictions): it guesses the word behind the text's [MASK].

    Its decoder is the word embeddings of the model it is used on (tied, as BERT's are), looked up at each
    use, unless the checkpoint has a decoder of its own.
    """

    transform: object  # bert_modules.PredictionTransform: dense (C, C), activation, LayerNorm; eval mode
    bias: torch.Tensor  # (V,) the decoder's bias
    decoder_weight: torch.Tensor | None  # (V, C) the checkpoint's own decoder; None: the word embeddings
    mask_token: str  # "[MASK]"
    mask_token_id: int
    objective = "masked"

    @property
    def prompt(self) -> str:
        return f"Type a sentence with one {self.mask_token} in it."

    def logits(self, model, hidden):
        decoder = self.decoder_weight
        if decoder is None:  # tied: the model's own word embeddings
            decoder = model.embeddings.word_embeddings.weight  # (V, C)
        return torch.nn.functional.linear(self.transform(hidden), decoder, self.bias)  # (..., V)

    def position(self, input_ids):
        masks = [index for index, token in enumerate(input_ids) if token == self.mask_token_id]
        if len(masks) != 1:
            raise ValueError(f"The sentence needs exactly one {self.mask_token} for the model to fill in; "
                             f"it has {len(masks) or 'none'}.")
        return masks[0]


class BertFamily(Family):
    name = "bert"
    label = "BERT"
    reads = "an encoder: every token looks both ways"
    sink_words = "[CLS] and [SEP]"
    first_token = "[CLS]"
    separator = "[SEP]"
    own_mask = "none"
    reads_pairs = True
    byte_level = False
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
    lm_head_prefix = MLM_HEAD_PREFIX
    special_tokens = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                      "mask_token": "[MASK]"}

    def check_config(self, config):
        problem = bert_modules.unsupported(config)
        if problem:
            raise ValueError(problem)

    def read_config(self, source, folder, cache_only):
        return BertConfig.read(folder / "config.json")

    def load(self, source, config, cache_only):
        return bert_modules.build(config, read_weights(checkpoint_file(source, cache_only)))

    def sinks(self, special_tokens_mask: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        return special_tokens_mask & attention_mask.astype(bool)  # (B, T): [CLS] and [SEP], not [PAD]

    def forward(self, model, input_ids, token_type_ids, attention_mask):
        return model(input_ids, token_type_ids, attention_mask)  # L + 1 x (B, T, C): embeddings, each layer's output

    def embed(self, model, input_ids, token_type_ids, record=unrecorded):
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
        return model.encoder.layer[layer](hidden, bert_modules.padding_mask(attention_mask))  # (B, T, C)

    def reference(self, model, layer, residual, attention_mask):
        attention = _transformers_attention(model, layer)
        mask = additive_mask(attention_mask)[:, None]  # (B, 1, 1, T)
        context, weights = attention.self(residual, attention_mask=mask)  # (B, T, nh·d), (B, nh, T, T)
        return ReferenceAttention(weights=weights, context=context,
                                  attention_output=attention(residual, attention_mask=mask)[0])  # (B, T, C)

    def layer_with_heads_off(self, model, layer, hidden, attention_mask, keep):
        block = model.encoder.layer[layer]
        shape = self.shape(model.config)
        projections = block.attention.self
        query, key, value = (split_heads(linear(hidden), shape.num_heads)  # (B, nh, T, d)
                             for linear in (projections.query, projections.key, projections.value))
        mask = additive(self.own_mask, attention_mask)  # (B, 1 or T, T): padding, or each packed text its own keys
        # A few heads at a time: the head ranking runs nh copies of a text, and its (B, nh, T, T) stages at once
        # held 0.6 GB for two sentences of 256 tokens.
        context = attend_in_chunks(query, key, value, mask, scaling_divisor("sqrt", shape.head_size))  # (B, nh, T, d)
        context = context * keep[:, :, None, None]  # (B, nh, T, d): switched-off heads at 0
        attention_output = block.attention.output(merge_heads(context), hidden)  # (B, T, C) LayerNorm(W_O·concat + X)
        return attention_output, block.output(block.intermediate(attention_output), attention_output)  # (B, T, C)

    def block_parts(self, model, layer):
        block = model.encoder.layer[layer]
        return BlockParts(placement="post", norm_name="LayerNorm", attention_norm=block.attention.output.LayerNorm,
                          mlp_norm=block.output.LayerNorm,
                          mlp=lambda hidden: block.output.dense(block.intermediate(hidden)),  # (B, T, I) -> (B, T, C)
                          mlp_formula="W_2 · GELU(W_1 · x + b_1) + b_2")

    def language_model_head(self, model, tokenizer, weights):
        missing = sorted(key for key in MLM_HEAD_KEYS if key not in weights)
        if missing:
            raise MissingHead(
                f"has no masked-language-model head (its checkpoint lacks {', '.join(missing[:3])}…): it was saved "
                "as an encoder only, so it cannot guess the word behind [MASK]. "
                f"Load {SUGGESTED_MODEL} (downloaded from the Hugging Face Hub on first use, about 440 MB) "
                "or a local checkpoint saved from BertForMaskedLM.")
        if tokenizer.mask_token_id is None:
            raise ValueError("its tokenizer has no [MASK] token")
        config = model.config
        dtype = model.embeddings.word_embeddings.weight.dtype
        prefix = f"{MLM_HEAD_PREFIX}transform."
        bias = weights.get(f"{MLM_HEAD_PREFIX}decoder.bias", weights[f"{MLM_HEAD_PREFIX}bias"])  # (V,)
        decoder_weight = weights.get(f"{MLM_HEAD_PREFIX}decoder.weight")  # (V, C), when not tied
        transform = bert_modules.PredictionTransform(config)
        try:
            transform.load_state_dict({key.removeprefix(prefix): tensor for key, tensor in weights.items()
                                       if key.startswith(prefix)}, assign=True)  # its tensors in the empty places
        except RuntimeError as error:  # a weight missing, left over or of another size
            raise ValueError(f"its masked-language-model head does not fit the encoder: {error}") from error
        if bias.shape != (config.vocab_size,) or (decoder_weight is not None
                                                   and decoder_weight.shape != (config.vocab_size, config.hidden_size)):
            raise ValueError(f"its masked-language-model head does not fit the encoder: its decoder is not "
                             f"{config.vocab_size} words of {config.hidden_size} numbers")
        transform.to(dtype).eval()
        transform.requires_grad_(False)
        return MaskedLMHead(transform=transform, bias=bias.to(dtype),
                            decoder_weight=None if decoder_weight is None else decoder_weight.to(dtype),
                            mask_token=tokenizer.mask_token, mask_token_id=tokenizer.mask_token_id)


# Each model's transformers BertAttention modules, by layer, built once: building one (Linear's initialisation, even on
# the meta device, and transformers' config) was half of a proof's time, paid on every new text. They share the
# model's weights and go with it (a model dropped from the page's cache takes its modules along).
_REFERENCE_MODULES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _transformers_attention(model, layer: int):
    """transformers' own BertAttention holding the layer's weights (shared, not copied): the code the proof
    measures the from-scratch attention against, imported only when a proof is asked for."""
    built = _REFERENCE_MODULES.setdefault(model, {})
    if layer not in built:
        from transformers.models.bert.modeling_bert import BertAttention

        with torch.device("meta"):  # no random initialisation: every parameter is replaced by the layer's
            attention = BertAttention(model.config.transformers_config())
        attention.load_state_dict(model.encoder.layer[layer].attention.state_dict(), assign=True)
        built[layer] = attention.eval()
    return built[layer]


def _linear(module: torch.nn.Linear) -> Linear:
    return Linear(module.weight.detach(), module.bias.detach())


BERT = BertFamily()
