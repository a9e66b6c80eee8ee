"""Switching heads off: what BERT's masked-word guess loses when some heads go silent.

A switched-off head has its context set to zero before the layer's output projection
(W_o), exactly as TraceSettings(heads_off=...) does in the trace. transformers 5 takes no
head_mask, and the model is shared by every session and thread of the server, so nothing
here registers a hook or changes the model: the encoder is run layer by layer with the
model's own modules (embeddings, each layer's Q/K/V, output projection, feed-forward and
the masked-language-model head), and only the step between attention and W_o is ours.
With no head off, the result is transformers' own BertForMaskedLM (parity tested).

The head is kept apart from the encoder it sits on (MaskedLMHead, a few MB): the encoder is
the BertModel the rest of the page loaded (attention.models.load_model), put under the head
at each use, so that whoever keeps the head never keeps a second copy of the encoder.

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, d head size,
L layers, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from attention.dot_product import additive_mask, attend, merge_heads, split_heads
from attention.models import BUNDLED_MODEL, LoadedModel, ModelLoadError, load_model, weights_path
from attention.settings import ModelShape, scaling_divisor

HeadsOff = tuple[tuple[int, int], ...]  # sorted (layer, head) pairs, both counted from 0
MLM_HEAD_PREFIX = "cls.predictions."  # BertForMaskedLM's head; missing from encoder-only checkpoints
SUGGESTED_MODEL = "bert-base-uncased"


class NoMaskedLMHead(ModelLoadError):
    """The checkpoint is an encoder only: it carries no masked-language-model head to guess words with."""


@dataclass(frozen=True, eq=False)
class MaskedLMHead:
    """BERT's masked-language-model head alone (cls.predictions), read from a checkpoint's weights.

    It holds nothing of the encoder it is used on: the decoder is that encoder's word embeddings (tied,
    as BERT's are), looked up at each use, unless the checkpoint has a decoder of its own.
    """

    name: str
    transform: object  # transformers' BertPredictionHeadTransform: dense (C, C), activation, LayerNorm; eval mode
    bias: torch.Tensor  # (V,) the decoder's bias
    decoder_weight: torch.Tensor | None  # (V, C) the checkpoint's own decoder; None: the word embeddings


@dataclass(frozen=True, eq=False)
class MaskedLM:
    """A BERT with its masked-language-model head, ready for inference: the encoder as loaded (eval mode, eager
    attention, no gradients, shared with the rest of the page) and the head on top of it."""

    encoder: LoadedModel
    head: MaskedLMHead

    @property
    def name(self) -> str:
        return self.encoder.name

    @property
    def tokenizer(self):
        return self.encoder.tokenizer

    @property
    def shape(self) -> ModelShape:
        return self.encoder.shape

    @property
    def max_tokens(self) -> int:
        return self.encoder.max_tokens

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., C) the encoder's last hidden states -> (..., V) the head's score of every word."""
        decoder = self.head.decoder_weight
        if decoder is None:  # tied: the encoder's own word embeddings
            decoder = self.encoder.model.embeddings.word_embeddings.weight  # (V, C)
        return torch.nn.functional.linear(self.head.transform(hidden), decoder, self.head.bias)  # (..., V)


@dataclass(frozen=True, eq=False)
class EncoderRun:
    """Every layer of one forward pass with some heads off, as numpy."""

    heads_off: HeadsOff
    hidden_states: tuple[np.ndarray, ...]  # L + 1 x (B, T, C): embeddings, then each layer's output
    attention_outputs: tuple[np.ndarray, ...]  # L x (B, T, C): LayerNorm(W_o·concat + X), before the feed-forward
    logits: np.ndarray  # (B, T, V) the masked-language-model head's scores


@dataclass(frozen=True)
class Prediction:
    """The model's guesses for the [MASK] of one sentence."""

    tokens: tuple[str, ...]  # the sentence as the model saw it, [CLS] … [SEP]
    mask_index: int  # where the [MASK] is in tokens
    heads_off: HeadsOff
    probabilities: np.ndarray  # (V,) softmax over the vocabulary at the mask
    top_ids: tuple[int, ...]  # the top_k token ids, most likely first
    top_words: tuple[str, ...]
    top_probabilities: tuple[float, ...]

    def probability_of(self, token_id: int) -> float:
        return float(self.probabilities[token_id])


@dataclass(frozen=True)
class HeadEffect:
    """What switching one head off (alone) does to the prediction."""

    layer: int
    head: int
    probability: float  # of the intact model's top word, with this head off
    drop: float  # intact probability - probability: positive when the head helped
    top_word: str  # the top word with this head off


# What a checkpoint must hold of the head; its decoder's weight and bias are the word embeddings and
# predictions.bias (tied), unless the checkpoint has its own.
MLM_HEAD_KEYS = tuple(f"{MLM_HEAD_PREFIX}{key}" for key in (
    "bias", "transform.dense.weight", "transform.dense.bias", "transform.LayerNorm.weight",
    "transform.LayerNorm.bias"))
_OLD_NAMES = {".gamma": ".weight", ".beta": ".bias"}  # LayerNorm as checkpoints converted from TensorFlow name it


def load_masked_lm(name: str = SUGGESTED_MODEL, encoder: LoadedModel | None = None) -> MaskedLM:
    """Load a BERT with its masked-language-model head, or raise NoMaskedLMHead if it has none.

    encoder: the same checkpoint's BertModel, already loaded (attention.models.load_model); then only the
    head's few weights are read and put on top of it, so the server holds one copy of the encoder.
    """
    if encoder is None:
        encoder = load_model(name)
    return MaskedLM(encoder, load_head(name, encoder))


def load_head(name: str, encoder: LoadedModel) -> MaskedLMHead:
    """The masked-language-model head in name's weights, made to fit encoder (the same checkpoint's BertModel,
    of which it keeps nothing); NoMaskedLMHead when the checkpoint has none."""
    from transformers.models.bert.modeling_bert import BertPredictionHeadTransform

    weights = _head_weights(name)
    _require_head(name, [key for key in MLM_HEAD_KEYS if key not in weights])
    _require_mask_token(name, encoder.tokenizer)
    config = encoder.model.config
    dtype = encoder.model.embeddings.word_embeddings.weight.dtype
    transform = BertPredictionHeadTransform(config)
    prefix = f"{MLM_HEAD_PREFIX}transform."
    bias = weights.get(f"{MLM_HEAD_PREFIX}decoder.bias", weights[f"{MLM_HEAD_PREFIX}bias"])  # (V,)
    decoder_weight = weights.get(f"{MLM_HEAD_PREFIX}decoder.weight")  # (V, C), when not tied
    try:
        transform.load_state_dict({key.removeprefix(prefix): tensor for key, tensor in weights.items()
                                   if key.startswith(prefix)})
    except RuntimeError as error:  # a weight missing, left over or of another size
        raise ModelLoadError(f"The masked-language-model head of {name!r} does not fit its encoder: {error}") from error
    if bias.shape != (config.vocab_size,) or (decoder_weight is not None
                                               and decoder_weight.shape != (config.vocab_size, config.hidden_size)):
        raise ModelLoadError(f"The masked-language-model head of {name!r} does not fit its encoder: its decoder is "
                             f"not {config.vocab_size} words of {config.hidden_size} numbers.")
    transform.to(dtype).eval()
    transform.requires_grad_(False)
    return MaskedLMHead(name=name, transform=transform, bias=bias.to(dtype),
                        decoder_weight=None if decoder_weight is None else decoder_weight.to(dtype))


def _head_weights(name: str) -> dict[str, torch.Tensor]:
    """{key: tensor} of the masked-language-model head in name's weights file, and nothing else."""
    path = weights_path(name)
    if path.suffix == ".safetensors":
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as weights:
            names = weights.keys()  # noqa: SIM118 (safe_open is no mapping: it has keys() and no __iter__)
            found = {key: weights.get_tensor(key) for key in names if key.startswith(MLM_HEAD_PREFIX)}
    else:
        every = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        found = {key: tensor.clone() for key, tensor in every.items() if key.startswith(MLM_HEAD_PREFIX)}
    renamed = {}
    for key, tensor in found.items():
        for old, new in _OLD_NAMES.items():
            key = key.removesuffix(old) + new if key.endswith(old) else key
        renamed[key] = tensor
    return renamed


def _require_mask_token(name: str, tokenizer) -> None:
    if tokenizer.mask_token_id is None:
        raise ModelLoadError(f"The tokenizer of {name!r} has no [MASK] token.")


def _require_head(name: str, missing: list[str]) -> None:
    if missing:
        shown = BUNDLED_MODEL if name == BUNDLED_MODEL else repr(name)
        raise NoMaskedLMHead(
            f"{shown} has no masked-language-model head (its checkpoint lacks {', '.join(sorted(missing)[:3])}…): "
            "it was saved as an encoder only, so it cannot guess the word behind [MASK]. "
            f"Load {SUGGESTED_MODEL} (downloaded from the Hugging Face Hub on first use, about 440 MB) "
            "or a local checkpoint saved from BertForMaskedLM."
        )


def normalise_heads_off(heads_off: Iterable[tuple[int, int]], shape: ModelShape) -> HeadsOff:
    """Check (layer, head) pairs against the model and return them sorted, without repeats."""
    pairs = set()
    for pair in heads_off:
        if (not isinstance(pair, tuple) or len(pair) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in pair)):
            raise ValueError(f"heads_off holds (layer, head) pairs of integers; got {pair!r}")
        layer, head = pair
        if not (0 <= layer < shape.num_layers and 0 <= head < shape.num_heads):
            raise ValueError(f"head ({layer}, {head}) does not exist: layers go from 0 to {shape.num_layers - 1}, "
                             f"heads from 0 to {shape.num_heads - 1}")
        pairs.add(pair)
    return tuple(sorted(pairs))


def drop_grid(effects: Iterable[HeadEffect], shape: ModelShape) -> np.ndarray:
    """(L, nh): the drop in the top word's probability, in percentage points, when that head alone is off."""
    grid = np.zeros((shape.num_layers, shape.num_heads), dtype=np.float32)
    for effect in effects:
        grid[effect.layer, effect.head] = 100 * effect.drop
    return grid


def run_encoder(masked_lm: MaskedLM, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                attention_mask: torch.Tensor, heads_off: Iterable[tuple[int, int]] = ()) -> EncoderRun:
    """The whole model on a batch (B, T) with the given heads switched off, every layer kept."""
    shape = masked_lm.shape
    off = normalise_heads_off(heads_off, shape)
    keep = torch.ones(input_ids.shape[0], shape.num_layers, shape.num_heads)  # (B, L, nh)
    for layer, head in off:
        keep[:, layer, head] = 0.0
    bert = masked_lm.encoder.model
    with torch.inference_mode():
        embeddings = bert.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)  # (B, T, C)
        hidden_states, attention_outputs = encoder_layers(bert, shape, embeddings, attention_mask, keep, start=0)
        logits = masked_lm.logits(hidden_states[-1])  # (B, T, V)
    return EncoderRun(
        heads_off=off,
        hidden_states=tuple(h.numpy() for h in (embeddings, *hidden_states)),
        attention_outputs=tuple(a.numpy() for a in attention_outputs),
        logits=logits.numpy(),
    )


def predict(masked_lm: MaskedLM, sentence: str, heads_off: Iterable[tuple[int, int]] = (),
            top_k: int = 5) -> Prediction:
    """The top_k words for the sentence's one [MASK], with the given heads switched off."""
    batch, mask_index = _encode(masked_lm, sentence)
    run = run_encoder(masked_lm, batch["input_ids"], batch["token_type_ids"], batch["attention_mask"], heads_off)
    return _prediction(masked_lm, batch, mask_index, run.heads_off, torch.from_numpy(run.logits[0, mask_index]),
                       top_k)


def head_ranking(masked_lm: MaskedLM, sentence: str) -> tuple[Prediction, tuple[HeadEffect, ...]]:
    """The intact prediction, and every head switched off alone, largest drop of its top word first.

    Heads of one layer run as one batch, from that layer's (unchanged) input onwards.
    """
    shape = masked_lm.shape
    batch, mask_index = _encode(masked_lm, sentence)
    bert = masked_lm.encoder.model
    effects: list[HeadEffect] = []
    with torch.inference_mode():
        embeddings = bert.embeddings(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"])  # (1, T, C)
        intact_keep = torch.ones(1, shape.num_layers, shape.num_heads)  # (1, L, nh)
        hidden_states, _ = encoder_layers(bert, shape, embeddings, batch["attention_mask"], intact_keep, start=0)
        intact = _prediction(masked_lm, batch, mask_index, (),
                             masked_lm.logits(hidden_states[-1])[0, mask_index], top_k=5)
        top_id = intact.top_ids[0]
        layer_inputs = (embeddings, *hidden_states)  # L + 1 x (1, T, C)
        mask = batch["attention_mask"].expand(shape.num_heads, -1)  # (nh, T)
        for layer in range(shape.num_layers):
            keep = torch.ones(shape.num_heads, shape.num_layers, shape.num_heads)  # (nh, L, nh): row h has head h off
            keep[torch.arange(shape.num_heads), layer, torch.arange(shape.num_heads)] = 0.0
            start = layer_inputs[layer].expand(shape.num_heads, -1, -1)  # (nh, T, C)
            outputs, _ = encoder_layers(bert, shape, start, mask, keep, start=layer)
            logits = masked_lm.logits(outputs[-1][:, mask_index])  # (nh, V)
            probabilities = torch.softmax(logits, dim=-1)  # (nh, V)
            for head in range(shape.num_heads):
                probability = float(probabilities[head, top_id])
                word = masked_lm.tokenizer.convert_ids_to_tokens(int(probabilities[head].argmax()))
                effects.append(HeadEffect(layer, head, probability, intact.top_probabilities[0] - probability, word))
    return intact, tuple(sorted(effects, key=lambda e: (-e.drop, e.layer, e.head)))


def encoder_layers(bert, shape: ModelShape, hidden: torch.Tensor, attention_mask: torch.Tensor, keep: torch.Tensor,
                   start: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Layers start… of bert's encoder (a transformers BertModel) from hidden (B, T, C); keep (B, L, nh) is 0
    for a head switched off. Returns the output and the attention output (before the feed-forward) of each
    layer run. Reads the model's modules and changes nothing in it.
    """
    divisor = scaling_divisor("sqrt", shape.head_size)  # what BERT was trained with
    mask = additive_mask(attention_mask)[:, None]  # (B, 1, 1, T): broadcasts over heads and queries
    outputs, attention_outputs = [], []
    for index in range(start, shape.num_layers):
        layer = bert.encoder.layer[index]
        projections = layer.attention.self
        query, key, value = (split_heads(linear(hidden), shape.num_heads)  # (B, nh, T, d)
                             for linear in (projections.query, projections.key, projections.value))
        context = attend(query, key, value, mask, divisor).context  # (B, nh, T, d)
        context = context * keep[:, index, :, None, None]  # (B, nh, T, d): switched-off heads at 0
        attention_output = layer.attention.output(merge_heads(context), hidden)  # (B, T, C) LayerNorm(W_o·concat + X)
        hidden = layer.output(layer.intermediate(attention_output), attention_output)  # (B, T, C)
        attention_outputs.append(attention_output)
        outputs.append(hidden)
    return outputs, attention_outputs


def _encode(masked_lm: MaskedLM, sentence: str) -> tuple[dict[str, torch.Tensor], int]:
    tokenizer = masked_lm.tokenizer
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"Type a sentence with one {tokenizer.mask_token} in it.")
    batch = tokenizer(sentence, return_tensors="pt", truncation=True,
                      max_length=masked_lm.max_tokens)
    batch.setdefault("token_type_ids", torch.zeros_like(batch["input_ids"]))
    masks = (batch["input_ids"][0] == tokenizer.mask_token_id).nonzero().flatten().tolist()
    if len(masks) != 1:
        found = "none" if not masks else f"{len(masks)}"
        raise ValueError(f"The sentence needs exactly one {tokenizer.mask_token} for the model to fill in; "
                         f"it has {found}.")
    return dict(batch), masks[0]


def _prediction(masked_lm: MaskedLM, batch, mask_index: int, heads_off: HeadsOff, logits: torch.Tensor,
                top_k: int) -> Prediction:
    probabilities = torch.softmax(logits.float(), dim=-1)  # (V,)
    top = torch.topk(probabilities, top_k)
    ids = tuple(int(i) for i in top.indices)
    return Prediction(
        tokens=tuple(masked_lm.tokenizer.convert_ids_to_tokens(batch["input_ids"][0].tolist())),
        mask_index=mask_index,
        heads_off=heads_off,
        probabilities=probabilities.numpy(),
        top_ids=ids,
        top_words=tuple(masked_lm.tokenizer.convert_ids_to_tokens(list(ids))),
        top_probabilities=tuple(float(p) for p in top.values),
    )
