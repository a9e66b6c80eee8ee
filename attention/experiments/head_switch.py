"""Switching heads off: what a model's own guess (BERT's masked word, GPT-2's next token) loses when some heads
go silent.

A switched-off head has its context set to zero before the layer's output projection
(W_o), exactly as TraceSettings(heads_off=...) does in the trace. transformers 5 takes no
head_mask, and the model is shared by every session and thread of the server, so nothing
here registers a hook or changes the model: the model is run layer by layer with its own
modules (the family's layer_with_heads_off: embeddings, each layer's Q/K/V, output projection,
feed-forward, then the language-model head of attention.models.lm_heads), and only the step between
attention and W_o is ours. With no head off, the result is transformers' own BertForMaskedLM or
GPT2LMHeadModel (parity tested).

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, L layers, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from attention.models.lm_heads import LanguageModel
from attention.models.loading import LoadedModel
from attention.stages.settings import ModelShape

HeadsOff = tuple[tuple[int, int], ...]  # sorted (layer, head) pairs, both counted from 0


@dataclass(frozen=True, eq=False)
class ModelRun:
    """Every layer of one forward pass with some heads off, as numpy."""

    heads_off: HeadsOff
    hidden_states: tuple[np.ndarray, ...]  # L + 1 x (B, T, C): embeddings, then each layer's output (before any ln_f)
    attention_outputs: tuple[np.ndarray, ...]  # L x (B, T, C): the attention block's output, before the feed-forward
    logits: np.ndarray  # (B, T, V) the language-model head's scores


@dataclass(frozen=True)
class Prediction:
    """The model's guesses for one text: the word behind its [MASK] (BERT), or the token after it (GPT-2)."""

    tokens: tuple[str, ...]  # the text as the model saw it, as the page shows tokens (attention.models.readable)
    special: tuple[bool, ...]  # per token: the tokenizer's own ([CLS], [SEP], …), not the one the guess is read at
    position: int  # where in tokens the guess is read: the [MASK], or the last token
    heads_off: HeadsOff
    probabilities: np.ndarray  # (V,) softmax over the vocabulary at position
    top_ids: tuple[int, ...]  # the top_k token ids, most likely first
    top_words: tuple[str, ...]  # as the page shows tokens
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


def run_model(language_model: LanguageModel, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
              attention_mask: torch.Tensor, heads_off: Iterable[tuple[int, int]] = ()) -> ModelRun:
    """The whole model on a batch (B, T) with the given heads switched off, every layer kept."""
    shape = language_model.shape
    off = normalise_heads_off(heads_off, shape)
    keep = torch.ones(input_ids.shape[0], shape.num_layers, shape.num_heads)  # (B, L, nh)
    for layer, head in off:
        keep[:, layer, head] = 0.0
    with torch.inference_mode():
        embeddings = embed(language_model.model, input_ids, token_type_ids)  # (B, T, C)
        hidden_states, attention_outputs = layers_with_heads_off(language_model.model, embeddings, attention_mask,
                                                                 keep, start=0)
        logits = language_model.logits(hidden_states[-1])  # (B, T, V)
    return ModelRun(
        heads_off=off,
        hidden_states=tuple(h.numpy() for h in (embeddings, *hidden_states)),
        attention_outputs=tuple(a.numpy() for a in attention_outputs),
        logits=logits.numpy(),
    )


def predict(language_model: LanguageModel, sentence: str, heads_off: Iterable[tuple[int, int]] = (),
            top_k: int = 5, intact_inputs: tuple[np.ndarray, ...] | None = None) -> Prediction:
    """The top_k tokens the model guesses for the sentence (behind its one [MASK], or after it), given heads off.

    intact_inputs: the sentence's layer_inputs, when kept. The layers before the first one with a head off read
    what they read in the intact model, so the pass starts there, from the kept input, and runs the rest only.
    """
    shape = language_model.shape
    batch, position = _encode(language_model, sentence)
    off = normalise_heads_off(heads_off, shape)
    keep = torch.ones(1, shape.num_layers, shape.num_heads)  # (1, L, nh)
    for layer, head in off:
        keep[:, layer, head] = 0.0
    first = 0 if intact_inputs is None else min((layer for layer, _ in off), default=shape.num_layers)
    with torch.inference_mode():
        if intact_inputs is None:
            hidden = embed(language_model.model, batch["input_ids"], batch["token_type_ids"])  # (1, T, C)
        else:
            hidden = torch.from_numpy(intact_inputs[first])  # (1, T, C)
        last = last_output_with_heads_off(language_model.model, hidden, batch["attention_mask"], keep,
                                          start=first)  # (1, T, C)
        # The head's scores at the one position read, not at all T: its decoder is C x V (30,522 words for BERT).
        logits = language_model.logits(last[:, position])[0]  # (V,)
    return _prediction(language_model, batch, position, off, logits, top_k)


def layer_inputs(language_model: LanguageModel, sentence: str) -> tuple[np.ndarray, ...]:
    """L + 1 x (1, T, C): what each layer of the intact model reads from the sentence, then the last layer's
    output (before any ln_f): kept by the page, so that predict starts at the first layer with a head off."""
    batch, _ = _encode(language_model, sentence)
    shape = language_model.shape
    with torch.inference_mode():
        embeddings = embed(language_model.model, batch["input_ids"], batch["token_type_ids"])  # (1, T, C)
        hidden_states, _ = layers_with_heads_off(language_model.model, embeddings, batch["attention_mask"],
                                                 torch.ones(1, shape.num_layers, shape.num_heads), start=0)
    return tuple(h.numpy() for h in (embeddings, *hidden_states))


def head_ranking(language_model: LanguageModel, sentence: str, intact_inputs: tuple[np.ndarray, ...] | None = None,
                 ) -> tuple[Prediction, tuple[HeadEffect, ...]]:
    """The intact prediction, and every head switched off alone, largest drop of its top word first.

    Heads of one layer run as one batch, from that layer's (unchanged) input onwards: intact_inputs, the sentence's
    layer_inputs when the page keeps them, else made here.
    """
    shape, loaded = language_model.shape, language_model.model
    batch, position = _encode(language_model, sentence)
    kept = layer_inputs(language_model, sentence) if intact_inputs is None else intact_inputs  # L + 1 x (1, T, C)
    effects: list[HeadEffect] = []
    intact = predict(language_model, sentence, intact_inputs=kept)  # the guesses a pass with every head on makes
    with torch.inference_mode():
        top_id = intact.top_ids[0]
        mask = batch["attention_mask"].expand(shape.num_heads, -1)  # (nh, T)
        for layer in range(shape.num_layers):
            keep = torch.ones(shape.num_heads, shape.num_layers, shape.num_heads)  # (nh, L, nh): row h has head h off
            keep[torch.arange(shape.num_heads), layer, torch.arange(shape.num_heads)] = 0.0
            start = torch.from_numpy(kept[layer]).expand(shape.num_heads, -1, -1)  # (nh, T, C)
            last = last_output_with_heads_off(loaded, start, mask, keep, start=layer)  # (nh, T, C)
            logits = language_model.logits(last[:, position])  # (nh, V)
            probabilities = torch.softmax(logits, dim=-1)  # (nh, V)
            words = _readable(language_model, probabilities.argmax(dim=-1).tolist())
            for head in range(shape.num_heads):
                probability = float(probabilities[head, top_id])
                effects.append(HeadEffect(layer, head, probability, intact.top_probabilities[0] - probability,
                                          words[head]))
    return intact, tuple(sorted(effects, key=lambda e: (-e.drop, e.layer, e.head)))


def embed(loaded: LoadedModel, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
    """(B, T) -> (B, T, C): the embeddings the first layer reads, as the model's family makes them."""
    return loaded.family.embed(loaded.model, input_ids, token_type_ids)


def layers_with_heads_off(loaded: LoadedModel, hidden: torch.Tensor, attention_mask: torch.Tensor,
                          keep: torch.Tensor, start: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Layers start… of the model from hidden (B, T, C); keep (B, L, nh) is 0 for a head switched off. Returns
    the output and the attention output (before the feed-forward) of each layer run. Reads the model's modules
    and changes nothing in it.
    """
    outputs, attention_outputs = [], []
    for layer in range(start, loaded.shape.num_layers):
        attention_output, hidden = loaded.family.layer_with_heads_off(loaded.model, layer, hidden, attention_mask,
                                                                      keep[:, layer])  # (B, T, C) each
        attention_outputs.append(attention_output)
        outputs.append(hidden)
    return outputs, attention_outputs


def last_output_with_heads_off(loaded: LoadedModel, hidden: torch.Tensor, attention_mask: torch.Tensor,
                               keep: torch.Tensor, start: int) -> torch.Tensor:
    """The last layer's output (B, T, C) of layers start… from hidden (B, T, C), keep as layers_with_heads_off's;
    hidden itself when start is past the last layer. Holds one layer's tensors at a time: the rankings run nh copies
    of a text, and every layer's outputs kept at once cost them 9 MB a layer at 512 tokens."""
    for layer in range(start, loaded.shape.num_layers):
        _, hidden = loaded.family.layer_with_heads_off(loaded.model, layer, hidden, attention_mask,
                                                       keep[:, layer])  # (B, T, C)
    return hidden


def _encode(language_model: LanguageModel, sentence: str) -> tuple[dict[str, torch.Tensor], int]:
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(language_model.head.prompt)
    batch = language_model.tokenizer.batch([(sentence, None)], language_model.max_tokens)
    return batch.tensors(), language_model.head.position(batch.input_ids[0].tolist())


def _prediction(language_model: LanguageModel, batch, position: int, heads_off: HeadsOff, logits: torch.Tensor,
                top_k: int) -> Prediction:
    probabilities = torch.softmax(logits.float(), dim=-1)  # (V,)
    top = torch.topk(probabilities, top_k)
    ids = tuple(int(i) for i in top.indices)
    input_ids = batch["input_ids"][0].tolist()
    special_ids = language_model.tokenizer.special_ids
    return Prediction(
        tokens=_readable(language_model, input_ids),
        special=tuple(token in special_ids and index != position for index, token in enumerate(input_ids)),
        position=position,
        heads_off=heads_off,
        probabilities=probabilities.numpy(),
        top_ids=ids,
        top_words=_readable(language_model, list(ids)),
        top_probabilities=tuple(float(p) for p in top.values),
    )


def _readable(language_model: LanguageModel, ids: list[int]) -> tuple[str, ...]:
    return language_model.family.readable(language_model.tokenizer.tokens(ids))
