"""A text's tokens and the input of each layer: key (model name, text, second text[, layer])."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention.analyses import context
from attention.dissect.outline import Outline, build_outline
from attention.models.loading import LoadedModel
from attention.stages.settings import TraceSettings
from attention.text import segments, unknown, words
from attention.text.encoding import Encoding, encode
from attention.text.layer_inputs import next_layer_input
from components.caches.budget import BUDGET, CACHE_ENTRIES
from components.caches.models import model
from components.caches.work import heavy_work


def encoding(name: str, text: str, text_b: str) -> Encoding:
    """The text's tokens, ids and masks, with no layer's hidden states: what the tokenizer alone gives.

    Without a heavy-work slot: tokenizing holds a few kB and waits for nothing, and nearly every rerun asks
    for it first; with a slot, a rerun that needed nothing else waited behind other sessions' layers."""
    return _encoding(name, text, text_b, model(name))


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["encoding"])
def _encoding(name: str, text: str, text_b: str, _loaded: LoadedModel) -> Encoding:
    """Keyed on the model's name; _loaded is the model loaded under it (left out of the key: the _)."""
    return encode(_loaded, text, text_b or None, layers=())


def unknown_characters(name: str, text: str, text_b: str) -> tuple[str, ...]:
    """For every token of the text (or pair): the characters an [UNK] stands for, else "" (attention/text/unknown.py).
    Tokenizing alone, as encoding(): without a heavy-work slot."""
    return _unknown_characters(name, text, text_b, model(name))


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["unknown_characters"])
def _unknown_characters(name: str, text: str, text_b: str, _loaded: LoadedModel) -> tuple[str, ...]:
    """Keyed on the model's name; _loaded is the model loaded under it (left out of the key: the _)."""
    return unknown.unknown_characters(_loaded.tokenizer, text, text_b, _loaded.max_tokens)


def layer_encoding(name: str, text: str, text_b: str, layer: int) -> Encoding:
    """The encoding with the input of one layer kept: what a trace of that layer reads, and all a student
    on that layer needs kept (1.5 MB at 512 tokens on bert-base, against 20 MB for every layer)."""
    with heavy_work():
        return _layer_encoding(name, text, text_b, layer)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["layer_encoding"],
               max_size=BUDGET.cache_bytes("layer_encoding"))
def _layer_encoding(name: str, text: str, text_b: str, layer: int) -> Encoding:
    """Made from the layer before (the embeddings for layer 0): a move to the next layer runs one layer, where
    every layer's input, kept for every text, would take a class's memory (20 MB a text at 512 tokens on bert-base)."""
    before = encoding(name, text, text_b) if layer == 0 else layer_encoding(name, text, text_b, layer - 1)
    return next_layer_input(model(name), before, layer)


def word_similarity_by_layer(name: str, first: str, first_index: int, second: str, second_index: int) -> np.ndarray:
    """(L + 1,) cosine similarity of token first_index of text first and token second_index of text second, at the
    embeddings and after each layer: one forward pass of each text, of which only these few floats are kept (the
    every-layer hidden states they are read from are 5.5 MB at 512 tokens on the bundled model, 20 MB on bert-base)."""
    with heavy_work():
        return _word_similarity_by_layer(name, first, first_index, second, second_index)


@st.cache_data(show_spinner="Running the model on the two texts…",
               max_entries=CACHE_ENTRIES["word_similarity_by_layer"])
def _word_similarity_by_layer(name: str, first: str, first_index: int, second: str, second_index: int) -> np.ndarray:
    loaded = model(name)
    return context.similarity_by_layer(encode(loaded, first, None), first_index, encode(loaded, second, None),
                                       second_index)


def outline(name: str, text: str, text_b: str, settings: TraceSettings) -> Outline:
    """The trace's steps without their tensors (name, stage, formula, shape), its tokens, head count and head
    size: what the shapes panel and a view's headings and axes read, made from the cached tokens in
    microseconds. A move that shows no number of the trace itself then builds none (at 472 tokens a trace
    is 16 MB, and the steps it shares with the layer's other heads compute every head's attention)."""
    return build_outline(model(name).shape, encoding(name, text, text_b), settings)


def visible_tokens(encoding: Encoding, pair: str, hide_special: bool) -> tuple[np.ndarray, np.ndarray]:
    """The query rows (R,) and keys (K,) that a sentence-pair filter and the sink-token toggle leave (the sinks:
    [CLS] and [SEP] for BERT, the first token for GPT-2; hide_special is the toggle's name in a link)."""
    return segments.visible_tokens(encoding.token_type_ids[0], encoding.sinks[0], pair, hide_special)


def text_words(name: str, text: str, text_b: str, whole: bool) -> words.Words:
    """The text's words (attention/text/words.py), or with whole=False each token a word of its own: the labels,
    sentences and sinks of a chart's rows and columns. Made from the cached tokens in microseconds, as outline() is."""
    return words.text_words(encoding(name, text, text_b), model(name).family.byte_level, whole)


def visible_words(shown: words.Words, pair: str, hide_special: bool) -> tuple[np.ndarray, np.ndarray]:
    """visible_tokens for the words of text_words: the query rows (R,) and keys (K,) left, counted in words.
    Words are merged first and filtered after: a word is a sink where one of its tokens is."""
    return segments.visible_tokens(shown.token_type_ids, shown.sinks, pair, hide_special)


def merged_words(values: np.ndarray, name: str, text: str, text_b: str) -> np.ndarray:
    """(..., T, T) weights of the text (a rollout, a stack) -> (..., W, W) between its whole words."""
    return words.merge_weights(values, text_words(name, text, text_b, True).spans)
