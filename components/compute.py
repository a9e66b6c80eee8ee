"""Every cache of the page, and the page's one door to the core.

The views never import a function of attention/: they call this module, which calls the core,
caches what pays to keep, and hands back numpy arrays and the core's frozen types. A number on
the screen is found by following one line: widget -> settings -> a function here -> attention/.
Everything a cache keys on is a plain value (a model name, a text, frozen settings), so equal
inputs share an entry across sessions; how many entries each keeps is set in CACHE_ENTRIES.

The model is loaded once per server process and shared by every session (inference only);
the forward pass runs once per text; every head of a layer is computed once per settings
(LayerAttention), and a trace of one head is made from it, so moving the head costs one head.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import gc
import logging
import os
from collections.abc import Callable, Iterable

import altair as alt
import numpy as np
import streamlit as st
import torch
from streamlit import dataframe_util

from attention import (
    BUNDLED_MODEL,
    Encoding,
    LayerAttention,
    LoadedModel,
    ModelLoadError,
    Outline,
    Trace,
    TraceSettings,
    allowed_hub_ids,
    build_outline,
    build_trace,
    compare,
    context,
    counting,
    download,
    embedding_switch,
    encode,
    head_switch,
    heads,
    hub,
    layer_attention,
    layer_projections,
    lesson,
    load_model,
    neuron,
    next_layer_input,
    scaling_lab,
    segments,
    transformers_weights,
    unknown,
    weights_path,
)
from components import class_store, model_room, process_memory, turns
from components.charts import spec_and_frames
from components.memory_budget import MemoryBudget, memory_budget
from components.slots import ThreadSlots

# One thread per operation: the matrices of one rerun are small, many sessions share two cores, and
# every rerun runs in a fresh thread, where a thread pool per operation costs more than it saves.
TORCH_THREADS = 1
torch.set_num_threads(TORCH_THREADS)
# Freed tensors go back to the system, so that the server shrinks again after a class.
process_memory.return_freed_memory()

# Folders of local BERT checkpoints the page may offer, separated like PATH ("a:b").
MODEL_DIRS_ENV = "ATTENTION_ANATOMY_MODEL_DIRS"

# How many entries each cache keeps, least recently used out first. Sizes are for a 512-token text.
CACHE_ENTRIES = {
    "model": 3,  # a BERT's weights: 90 MB bundled, 440 MB bert-base
    "masked_lm": 2,  # the masked-language-model head alone (a few MB), put on model()'s encoder, for the switch view
    # Tokens, ids and masks of a text (a few kB): a class of 30, each with a text of their own.
    "encoding": 64,
    "unknown_characters": 64,  # what each [UNK] of a text stands for: a few characters
    # A class of 30, each with a text of their own, must not push each other out (every move would run
    # the model again): the input of one layer, 0.75 MB at 512 tokens on the bundled model, 1.5 MB on bert-base.
    "layer_encoding": 128,
    # The lesson's last step: a word's similarity in two texts, a float per layer (read off every layer's
    # hidden states, which are not kept: a class's texts would need too many).
    "word_similarity_by_layer": 64,
    # What a trace of any head of the layer is made of: every head's context, 0.75 MB at 512 tokens. A class's
    # worth and more (a student of the lesson looks at two or three settings): a head move then computes one head.
    "layer_contexts": 128,
    # One stage other than the weights (scores, scaled, context) of every head of the layers sent: 0.3 MB for
    # every layer at 32 tokens, 12.6 MB for one layer at 512. The weights are read off layer_weights instead.
    "head_stack": 16,
    # The neuron view's numbers of the heads sent, every query: (h, T, T) three times, 2.8 MB for one head at 484
    # tokens. A long text's students move the query most: one entry each.
    "neuron_heads": 32,
    "layer_proof": 512,  # (nh,) floats: every layer of a class's texts
    "entropy_by_layer": 16,  # (L, nh) floats
    # (model, text, second text, settings, layers): (len(layers), T, T) floats, 0.1 MB for 6 layers at 64 tokens
    "rollout_by_layer": 16,
    "lab_variance": 1,  # a few dozen floats; the samples never change
    "lab_random_scores": 16,  # (H, R, T) floats, about 0.3 MB
    "lab_random_statistics": 64,  # a few dozen floats per token count and τ
    "lab_head_statistics": 64,  # a few dozen floats per text, layer and τ
    "switch_prediction": 64,  # five words and their probabilities
    "switch_ranking": 16,  # one line per head
    "switch_embeddings": 64,  # two sentence embeddings, 3 kB on the bundled model
    "switch_embedding_ranking": 16,  # one line per head
    "head_changes": 128,  # the compare view: a largest change per head of a layer, a class's worth
    "chart_spec": 128,  # a Vega-Lite spec without its data, a few kB
    # An Altair chart's spec and datasets: the lesson's heatmaps, 0.1 to 0.2 MB each at 474 tokens (their
    # pictures), two or three a step; a class's lesson students walking their steps up and down.
    "drawn_chart": 64,
    # A scrubbed chart's datasets, a class's worth: up to two per view and student (the heads grid and its
    # summary), about 0.3 MB at 32 tokens, 1.6 MB for a layer of pictures at 512 (scrub.send_plan's budgets).
    "chart_data": 96,
}


log = logging.getLogger(__name__)


def _budget() -> MemoryBudget:
    try:
        return memory_budget()
    except ValueError as error:  # a deployer's typo must not take the page down: said in the log, default used
        log.error("%s; using the default budget", error)
        return memory_budget(environ={})


# Every cache that can grow large is also bounded in bytes (its pickled size), by its share of the budget.
BUDGET = _budget()
log.info("memory budget: %s", BUDGET.describe())

# Every head of one layer under one choice of settings (the projections, the contexts and every head's weights),
# which the charts, the proof, the entropies and the rollout read: kept for the run at hand (a layer move
# reads it for the chart and the proof), as many as its share holds of the largest, a 512-token layer of
# 12 heads on bert-base (19 MB; 15 MB on the bundled model): one, by default.
LARGEST_LAYER_BYTES = 4 * (12 * 512 * 512 + 4 * 512 * 768)  # float32 weights (nh, T, T), then Q, K, V, concat (T, C)
LAYER_ENTRIES = max(1, BUDGET.cache_bytes("layer") // LARGEST_LAYER_BYTES)

# Building a trace, a stack of every head or a forward pass holds its tensors until it is done: at most
# HEAVY_SLOTS of them run at once, the others wait their turn. More would not finish sooner on as many
# cores, and thirty students opening 512-token texts at once would hold thirty sets of tensors.
HEAVY_SLOTS = os.cpu_count() or 2


def _one_torch_thread() -> None:
    # Again in every thread that takes a heavy slot: OpenMP keeps the count per thread, and a rerun's fresh thread
    # would otherwise multiply matrices with one thread per core, rounding the last bit apart from one thread's result.
    torch.set_num_threads(TORCH_THREADS)


_heavy = ThreadSlots("heavy-work", HEAVY_SLOTS, on_take=_one_torch_thread)


def heavy_work() -> contextlib.AbstractContextManager[None]:
    """Hold one of the HEAVY_SLOTS while the block runs (once per thread, however deeply nested).

    Taken before a cache is asked, never inside a cached function: Streamlit locks a key while its value
    is computed, and a thread that held that lock while it waited for a slot could wait for ever.
    """
    return _heavy.held()


# A view's run holds, besides the numbers it computes, the copies its cache hits hand back (st.cache_data unpickles
# one on every hit), the pictures it encodes and the chart it sends: 20-35 MB at 474 tokens. Thirty students
# moving at once on two cores left a dozen runs under way, sharing the cores, each holding its share. At most
# PAGE_SLOTS views are drawn at once; the others wait before they take anything, and finish no later for it:
# two cores do not draw a dozen views sooner than three at a time. Waiting longer than PAGE_WAIT_S (a slot held
# by a view that has hung), a run goes on without one: better over the budget a moment than a class's pages
# stuck behind one.
PAGE_SLOTS = HEAVY_SLOTS + 1
PAGE_WAIT_S = 30.0
_page = ThreadSlots("page", PAGE_SLOTS, wait_s=PAGE_WAIT_S)


def page_work() -> contextlib.AbstractContextManager[None]:
    """Hold one of the PAGE_SLOTS while a view is drawn (once per thread, however deeply nested). Taken before
    anything is computed or asked of a cache, as heavy_work is, and never while holding a heavy slot."""
    return _page.held()


def model_names() -> tuple[str, ...]:
    """What the model selector offers: the bundled model, the allowed Hub ids, configured folders."""
    folders = [p for p in os.environ.get(MODEL_DIRS_ENV, "").split(os.pathsep) if p.strip()]
    return (BUNDLED_MODEL, *allowed_hub_ids(), *folders)


def is_hub_model(name: str) -> bool:
    return name in allowed_hub_ids()


# ---- Hub models: one download per model per server process, shared by every session ----

@st.cache_resource(show_spinner=False)
def downloads() -> download.Downloads:
    return download.Downloads(max_weights_bytes=model_room_bytes())


def model_room_bytes() -> int:
    """The room every loaded model's weights share beside the bundled model's, in this server's memory budget."""
    try:
        bundled = weights_path(BUNDLED_MODEL).stat().st_size
    except ModelLoadError:  # a damaged install: the bundled model cannot load, so it takes no room either
        bundled = 0
    return BUDGET.weights_mb * 2**20 - bundled


def needs_download(name: str) -> bool:
    """Whether name is an allowed Hub model whose files are not all in the cache yet."""
    return download.is_hub_model(name) and not hub.is_cached(name)


check_can_download = download.check_can_download  # raises ModelLoadError, saying why, when no download may start


# ---- The model and the text: key (model name) and (model name, text, second text) ----

# A model the cache pushes out or is cleared of gives its room back (components/model_room.py).
@st.cache_resource(show_spinner="Loading the model (once per server)…", max_entries=CACHE_ENTRIES["model"],
                   on_release=lambda loaded: model_room.LOADED.forget(loaded.name))
def model(name: str) -> LoadedModel:
    # On disk already (a folder, or downloaded): refused before it is read unless it fits beside the models loaded.
    weights_bytes = 0 if name == BUNDLED_MODEL else weights_path(name).stat().st_size  # the room is beside it
    with model_room.LOADED.reserved(name, weights_bytes, model_room_bytes()):
        loaded = load_model(name)
    # Nearly half a million long-lived objects (torch, transformers, the weights' wrappers): moved
    # out of the cyclic collector's sight, a full collection takes microseconds instead of 0.4 s.
    gc.freeze()
    return loaded


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
    """For every token of the text (or pair): the characters an [UNK] stands for, else "" (attention/unknown.py).
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


# ---- Every head of a layer, computed once: key (model name, text, second text, settings with head 0) ----

# Every head's weights are kept with the layer while they take at most this many floats (64 MB): 12 heads of
# 512 tokens take 3.1 million; a random source with head_dim 1 (C heads) on a long text computes them by parts.
LAYER_WEIGHTS_FLOATS = 2**24


def layer_weights(name: str, text: str, text_b: str, settings: TraceSettings) -> LayerAttention:
    """Every head of settings.layer computed once, with every head's weights when they fit
    (LAYER_WEIGHTS_FLOATS): what the charts' stacks, the proof, the entropies and the rollout read."""
    with heavy_work():
        return _layer(name, text, text_b, _any_head(settings))


# Shared by reference, not pickled: st.cache_data copies a value on every hit, and this one is read two or
# three times a rerun; in a class of long texts, the queued reruns each held their own copies of it. Callers
# must not change its arrays.
@st.cache_resource(show_spinner=False, max_entries=LAYER_ENTRIES)
def _layer(name: str, text: str, text_b: str, settings: TraceSettings) -> LayerAttention:
    loaded, tokens = model(name), encoding(name, text, text_b).num_tokens
    fits = settings.num_heads(loaded.shape) * tokens * tokens <= LAYER_WEIGHTS_FLOATS
    return layer_attention(loaded, layer_encoding(name, text, text_b, settings.layer), settings, keep_weights=fits)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["layer_contexts"],
               max_size=BUDGET.cache_bytes("layer_contexts"))
def _layer_contexts(name: str, text: str, text_b: str, settings: TraceSettings) -> LayerAttention:
    """The layer as a trace needs it kept (every head's context: 0.75 MB at 512 tokens), a class's worth:
    a head move then computes one head, and a layer move computes every head once, for both caches."""
    with heavy_work():
        return _layer(name, text, text_b, settings).contexts_only()


# ---- One layer and head: key (model name, text, second text, settings) ----

def outline(name: str, text: str, text_b: str, settings: TraceSettings) -> Outline:
    """The trace's steps without their tensors (name, stage, formula, shape), its tokens, head count and head
    size: what the shapes panel and a view's headings and axes read, made from the cached tokens in
    microseconds. A move that shows no number of the trace itself then builds none (at 472 tokens a trace
    is 16 MB, and the steps it shares with the layer's other heads compute every head's attention)."""
    return build_outline(model(name).shape, encoding(name, text, text_b), settings)


def trace(name: str, text: str, text_b: str, settings: TraceSettings) -> Trace:
    """Every step of one head, made anew from the cached layer (its own head's attention, the embeddings and
    the output projection: a few ms at 512 tokens), so that no cache keeps the layer's numbers twice."""
    with heavy_work():
        return build_trace(model(name), layer_encoding(name, text, text_b, settings.layer), settings,
                           _layer_contexts(name, text, text_b, _any_head(settings)))


def proof(name: str, text: str, text_b: str, layer: int, head: int) -> float:
    """Largest difference between the from-scratch weights (trained head, √d_k) and transformers'."""
    with heavy_work():
        return float(_layer_proof(name, text, text_b, layer)[head])


# Per layer, not per head: transformers computes every head of a layer at once (64 ms at 512 tokens).
@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["layer_proof"])
def _layer_proof(name: str, text: str, text_b: str, layer: int) -> np.ndarray:
    """(nh,): for each head of the layer, the largest |from-scratch weight − transformers' weight|. At the
    reference settings the page shows most, the from-scratch weights are the chart's own (layer_weights)."""
    reference_settings = TraceSettings(layer=layer, source="bert", scaling="sqrt")
    ours = heads.head_weights(layer_weights(name, text, text_b, reference_settings))  # (1, nh, T, T)
    theirs = transformers_weights(model(name), layer_encoding(name, text, text_b, layer), layer)  # (1, nh, T, T)
    difference = np.abs(np.subtract(theirs, ours, out=theirs), out=theirs)  # in place: no layer-sized temporary
    return difference.max(axis=(0, 2, 3))


def settings_for(state) -> TraceSettings:
    """The core's settings for a page state (head_dim only matters for random projections)."""
    return TraceSettings(
        layer=state.layer,
        head=state.head,
        source=state.source,
        head_dim=state.head_dim if state.source == "random" else None,
        scaling=state.scaling,
        # Values a choice does not use are left at their defaults, so equal settings share a cache entry.
        temperature=state.temperature if state.scaling == "temperature" else 1.0,
        seed=state.seed if state.source == "random" else 0,
    )


def visible_tokens(encoding: Encoding, pair: str, hide_special: bool) -> tuple[np.ndarray, np.ndarray]:
    """The query rows (R,) and keys (K,) that a sentence-pair filter and the special-token toggle leave."""
    return segments.visible_tokens(encoding.token_type_ids[0], encoding.special_tokens_mask[0], pair, hide_special)


def head_stack(name: str, text: str, text_b: str, settings: TraceSettings, stage: str, layers: tuple[int, ...],
               heads_sent: tuple[int, ...], pair: str = "all", hide_special: bool = False) -> np.ndarray:
    """(len(layers), len(heads_sent), R, K): one stage (scores, scaled, weights; the context is (…, R, d)) of
    the given heads of the given layers, cut to the rows and keys the pair filter leaves; the weights
    renormalised over the kept keys when the special tokens are hidden. The key leaves out the head.

    The weights are read off layer_weights, which holds them already, and are not kept a second time: a whole
    layer's, uncut, is layer_weights' own array, read-only, not a copy."""
    with heavy_work():
        if stage == "weights":
            rows, keys = visible_tokens(encoding(name, text, text_b), pair, hide_special)  # (R,), (K,)
            stacks = [segments.visible_weights(
                heads.head_weights(_heads_source(name, text, text_b, _any_head(settings, layer=layer), heads_sent),
                                   heads_sent)[0], rows, keys, hide_special)  # (h, R, K)
                for layer in layers]
            return stacks[0][None] if len(stacks) == 1 else np.stack(stacks)  # (len(layers), h, R, K)
        return _head_stack(name, text, text_b, _any_head(settings, layer=0), stage, layers, heads_sent, pair,
                           hide_special)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["head_stack"], max_size=BUDGET.cache_bytes("head_stack"))
def _head_stack(name: str, text: str, text_b: str, settings: TraceSettings, stage: str, layers: tuple[int, ...],
                heads_sent: tuple[int, ...], pair: str, hide_special: bool) -> np.ndarray:
    """A stage other than the weights, computed from the layer's projections for the heads sent (hidden
    special tokens are left out, never renormalised: these are not weights)."""
    rows, keys = visible_tokens(encoding(name, text, text_b), pair, hide_special)  # (R,), (K,)
    stacks = []
    for layer in layers:
        some_heads = heads.head_stage(_heads_source(name, text, text_b, dataclasses.replace(settings, layer=layer),
                                                    heads_sent, weights=False), stage, heads_sent)[0]  # (h, T, T|d)
        if stage == "context":
            stacks.append(some_heads[:, rows])  # (h, R, d)
        else:
            stacks.append(segments.visible_weights(some_heads, rows, keys, False))  # (h, R, K)
    return np.stack(stacks)  # (len(layers), h, R, K or d)


def _heads_source(name: str, text: str, text_b: str, settings: TraceSettings, heads_sent: tuple[int, ...],
                  weights: bool = True) -> LayerAttention:
    """What heads.head_stage reads the heads sent from: every head's weights of the layer, when they are all
    sent; else the layer's projections alone, from which the few heads sent are computed. A long text sends one
    head at a time to the compare view, where every head of both texts took a layer's attention at each move."""
    loaded = model(name)
    if weights and len(heads_sent) == settings.num_heads(loaded.shape):
        return layer_weights(name, text, text_b, settings)
    return layer_projections(loaded, layer_encoding(name, text, text_b, settings.layer), settings)


def neuron_heads(name: str, text: str, text_b: str, settings: TraceSettings,
                 heads_sent: tuple[int, ...]) -> neuron.NeuronHeads:
    """Every query token's neuron view in the given heads of settings' layer: q, every k, the sums, the scaled
    scores and the softmax. Kept: a long text's chart is sent one query at a time, and every query move read
    them again from a trace, whose layer input a class's texts had pushed out (on bert-base, a fifth of the
    server's time went to running the layers up to it again)."""
    with heavy_work():
        return _neuron_heads(name, text, text_b, settings, heads_sent)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["neuron_heads"],
               max_size=BUDGET.cache_bytes("neuron_heads"))
def _neuron_heads(name: str, text: str, text_b: str, settings: TraceSettings,
                  heads_sent: tuple[int, ...]) -> neuron.NeuronHeads:
    return neuron.neuron_heads(trace(name, text, text_b, settings), heads_sent)


def neuron_view(name: str, text: str, text_b: str, settings: TraceSettings, query: int) -> neuron.NeuronView:
    """One query token's neuron view in settings' head: q, every k, q ⊙ k_j, the sums, the scaled scores and the
    softmax (for a download: the chart multiplies q and k_j in the browser)."""
    return neuron.neuron_view(trace(name, text, text_b, settings), query)


# ---- Every head of a layer, and every layer: the key leaves out the head, which none of them reads ----

head_summary = heads.head_summary  # (weights, mask) -> mean entropy and mean largest weight per head
aggregate_heads = heads.aggregate_heads  # (..., nh, T, T) -> (..., T, T) by mean or max


def entropy_by_layer(name: str, text: str, text_b: str, settings: TraceSettings, num_layers: int) -> np.ndarray:
    """(L, nh): the mean entropy of every head of every layer, under settings at each layer in turn."""
    with heavy_work():
        return _entropy_by_layer(name, text, text_b, _any_head(settings, layer=0), num_layers)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["entropy_by_layer"])
def _entropy_by_layer(name: str, text: str, text_b: str, settings: TraceSettings, num_layers: int) -> np.ndarray:
    return np.stack([heads.head_entropies(layer_weights(name, text, text_b, dataclasses.replace(settings, layer=layer)))
                     for layer in range(num_layers)])  # (L, nh)


def rollout_by_layer(name: str, text: str, text_b: str, settings: TraceSettings,
                     layers: tuple[int, ...]) -> np.ndarray:
    """(len(layers), T, T): attention rollout through layers 0 to each of layers in turn, for a chart that
    switches layer in the browser."""
    with heavy_work():
        return _rollout_by_layer(name, text, text_b, _any_head(settings, layer=0), tuple(layers))


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["rollout_by_layer"],
               max_size=BUDGET.cache_bytes("rollout_by_layer"))
def _rollout_by_layer(name: str, text: str, text_b: str, settings: TraceSettings,
                      layers: tuple[int, ...]) -> np.ndarray:
    means = [heads.mean_of_heads(layer_weights(name, text, text_b, dataclasses.replace(settings, layer=layer)))
             for layer in range(max(layers) + 1)]  # each (1, 1, T, T)
    return np.stack([heads.rollout(means[:layer + 1]) for layer in layers])  # (len(layers), T, T)


def _any_head(settings: TraceSettings, **changes) -> TraceSettings:
    """settings for a whole layer: head 0 stands for any, so one student's head moves keep one entry."""
    return dataclasses.replace(settings, head=0, **changes)


# ---- Two texts side by side ----

aligned_positions = compare.aligned_positions  # (tokens_a, tokens_b) -> positions (K,) of the shared tokens
alignment_keys = unknown.alignment_keys  # (tokens, unknown_characters) -> what aligned_positions compares
aligned_difference = compare.aligned_difference  # (weights_a, weights_b, positions_a, positions_b) -> (K, K)


def head_change(name: str, text_a: str, text_b: str, settings: TraceSettings,
                count_special: bool = False) -> compare.HeadChange | None:
    """The aligned pair whose weight differs most between two texts, each run alone, in settings' layer and head,
    and each query token's: [CLS] and [SEP] left out unless count_special (None: the texts share no other token)."""
    with heavy_work():
        return _head_changes(name, text_a, text_b, _any_head(settings), count_special)[settings.head]


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["head_changes"])
def _head_changes(name: str, text_a: str, text_b: str, settings: TraceSettings,
                  count_special: bool) -> tuple[compare.HeadChange | None, ...]:
    """Every head's largest change, found once per layer: a head move then reads a few numbers, where it read
    both texts' every head (whose layers a class's texts push out of _layer: two layers computed a move)."""
    encodings = [encoding(name, text, "") for text in (text_a, text_b)]
    # An [UNK] pairs only with an [UNK] of the same characters, as the view aligns them (attention/unknown.py).
    keys_a, keys_b = (unknown.alignment_keys(list(encoded.tokens[0]), unknown_characters(name, text, ""))
                      for encoded, text in zip(encodings, (text_a, text_b), strict=True))
    positions_a, positions_b = compare.aligned_positions(keys_a, keys_b)  # (K,) each
    leave_out = None if count_special else encodings[0].special_tokens_mask[0][positions_a]  # (K,)
    weights_a, weights_b = (heads.head_weights(layer_weights(name, text, "", settings))[0]  # (nh, T, T) each
                            for text in (text_a, text_b))
    return compare.largest_changes(weights_a, weights_b, positions_a, positions_b, leave_out)


# ---- The scaling lab: keys (head sizes, samples, seed), (token count, τ), (text, settings, τ) ----

@st.cache_data(show_spinner="Measuring q·k for random vectors…", max_entries=CACHE_ENTRIES["lab_variance"])
def variance_by_head_size(head_sizes: tuple[int, ...], scalings: tuple[str, ...], samples: int,
                          seed: int = 0) -> dict[str, np.ndarray]:
    """{scaling: (H,)} the variance of q·k for random unit-variance vectors, at each head size."""
    return scaling_lab.variance_by_head_size(head_sizes, scalings, samples, seed)


@st.cache_data(show_spinner="Drawing random scores…", max_entries=CACHE_ENTRIES["lab_random_scores"],
               max_size=BUDGET.cache_bytes("lab_random_scores"))
def random_scores(head_sizes: tuple[int, ...], tokens: int, rows: int, seed: int = 0) -> np.ndarray:
    """(H, R, T): random raw scores q·k over `tokens` keys for every head size, drawn once per token count."""
    return scaling_lab.random_scores_by_head_size(head_sizes, tokens, rows, seed)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["lab_random_statistics"])
def random_softmax_statistics(head_sizes: tuple[int, ...], tokens: int, rows: int, scalings: tuple[str, ...],
                              temperature: float, seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """{scaling: {"entropy", "max_weight": (H,)}} of softmax over random_scores, each scaling in turn."""
    return scaling_lab.softmax_statistics_by_head_size(random_scores(head_sizes, tokens, rows, seed), head_sizes,
                                                       scalings, temperature)


def head_softmax_statistics(name: str, text: str, text_b: str, settings: TraceSettings, scalings: tuple[str, ...],
                            temperature: float) -> dict[str, dict[str, np.ndarray]]:
    """{scaling: {"entropy", "max_weight": (nh,)}} for every trained head of settings.layer."""
    with heavy_work():
        return _head_softmax_statistics(name, text, text_b, settings, scalings, temperature)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["lab_head_statistics"])
def _head_softmax_statistics(name: str, text: str, text_b: str, settings: TraceSettings, scalings: tuple[str, ...],
                             temperature: float) -> dict[str, dict[str, np.ndarray]]:
    layer = trace(name, text, text_b, settings)
    return scaling_lab.head_softmax_statistics(layer["Q split"][0], layer["K split"][0], scalings, temperature)


temperature_row = scaling_lab.temperature_row  # (scores (T,), τs) -> (τs, T) softmax(scores / τ) per τ


# ---- Switching heads off: keys (model name) and (model name, sentence[, heads off]) ----

@st.cache_resource(show_spinner="Loading the model with its masked-language-model head (once per server)…",
                   max_entries=CACHE_ENTRIES["masked_lm"])
def masked_lm_head(name: str) -> tuple[head_switch.MaskedLMHead | None, str | None]:
    """The head alone, or None and why: a checkpoint without the head stays without it, so that is cached too."""
    try:
        return head_switch.load_head(name, model(name)), None
    except head_switch.NoMaskedLMHead as error:
        return None, str(error)


def masked_lm(name: str) -> tuple[head_switch.MaskedLM | None, str | None]:
    """The model with its head, or None and why: the kept head on the encoder model(name) holds now, so that an
    encoder the model cache lets go is not kept here as a second copy beside the one it loads again."""
    head, why = masked_lm_head(name)
    return (None if head is None else head_switch.MaskedLM(model(name), head)), why


def prediction(name: str, sentence: str, heads_off: tuple[tuple[int, int], ...]) -> head_switch.Prediction:
    with heavy_work():
        return _prediction(name, sentence, heads_off)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["switch_prediction"])
def _prediction(name: str, sentence: str, heads_off: tuple[tuple[int, int], ...]) -> head_switch.Prediction:
    return head_switch.predict(masked_lm(name)[0], sentence, heads_off)


def ranking(name: str, sentence: str) -> tuple[head_switch.Prediction, tuple[head_switch.HeadEffect, ...]]:
    with heavy_work():
        return _ranking(name, sentence)


@st.cache_data(show_spinner="Switching every head off in turn…", max_entries=CACHE_ENTRIES["switch_ranking"])
def _ranking(name: str, sentence: str) -> tuple[head_switch.Prediction, tuple[head_switch.HeadEffect, ...]]:
    return head_switch.head_ranking(masked_lm(name)[0], sentence)


drop_grid = head_switch.drop_grid  # (effects, shape) -> (L, nh) drop in the top word's probability, in points


# ---- Switching heads off in a model without the head: the sentence embedding, keys (model, text, second[, off]) ----

DEFAULT_SECOND = embedding_switch.DEFAULT_SECOND  # the second sentence when none is typed


def sentence_pair(name: str, text: str, second: str,
                  heads_off: tuple[tuple[int, int], ...]) -> embedding_switch.EmbeddingRun:
    """The two sentences' embeddings (mean pooling, length 1) and their cosine similarity, some heads off."""
    with heavy_work():
        return _sentence_pair(name, text, second, heads_off)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["switch_embeddings"])
def _sentence_pair(name: str, text: str, second: str,
                   heads_off: tuple[tuple[int, int], ...]) -> embedding_switch.EmbeddingRun:
    return embedding_switch.compare(model(name), text, second, heads_off)


def embedding_ranking(name: str, text: str, second: str) -> tuple[embedding_switch.EmbeddingRun,
                                                                  tuple[embedding_switch.EmbeddingEffect, ...]]:
    """Every head switched off alone: how far the first sentence's embedding moves, largest first."""
    with heavy_work():
        return _embedding_ranking(name, text, second)


@st.cache_data(show_spinner="Switching every head off in turn…", max_entries=CACHE_ENTRIES["switch_embedding_ranking"])
def _embedding_ranking(name: str, text: str, second: str) -> tuple[embedding_switch.EmbeddingRun,
                                                                   tuple[embedding_switch.EmbeddingEffect, ...]]:
    return embedding_switch.head_ranking(model(name), text, second)


moved_grid = embedding_switch.moved_grid  # (effects, L, nh) -> (L, nh) how far the first embedding moves


# ---- The lesson: the core's facts about a trace, read on arrays the view already holds ----

diagonal_wins = lesson.diagonal_wins
twin_wins = lesson.twin_wins
row_sum_error = lesson.row_sum_error
strongest_keys = lesson.strongest_keys
head_block = lesson.head_block
falling_layers = lesson.falling_layers
shared_word = lesson.shared_word
shared_words = lesson.shared_words  # (encoding, encoding) -> every whole word the two share, once each
telling_word = lesson.telling_word  # shared words -> the first that is not a stop word


# ---- Counting letters: trained in the session that asked (the models are tiny and nobody else's) ----

TRAINING_LIMIT_S = 120.0  # a training still running after this long stops where it is, and says so


@st.cache_resource(show_spinner=False)
def training_turns() -> turns.Turns:
    """The server's one line of trainings, shared by every session: at most as many at once as cores."""
    try:
        slots = turns.slots_from_environment()
    except ValueError as error:  # a deployer's typo must not take the page down: said in the log
        log.error("%s; using one per core", error)
        slots = os.cpu_count() or 1
    return turns.Turns(slots)


train_counting = counting.train  # (config, on_step) -> TrainingResult, reporting every step
untrained_counting = counting.untrained  # config -> TrainingResult at step 0: the weights training starts from
inspect_counting = counting.inspect  # (result, windows) -> CountingTrace: attention and counts per window
example_windows = counting.example_windows  # (config, count, seed) -> (count, W) windows to look at
letter_counts = counting.letter_counts  # (trace, index) -> per letter: counts and own-letter attention
equal_letters = counting.equal_letters  # (trace, index) -> how rows of a repeated letter compare


# ---- Drawing: specs and datasets built once per set of arguments ----

@functools.lru_cache(maxsize=CACHE_ENTRIES["chart_spec"])
def chart_spec(build: Callable[..., dict], *arguments) -> dict:
    """build(*arguments), a chart's spec without its data, kept: Altair's building and schema validation
    cost more than the rest of a move. Callers must not change the dict (Streamlit copies before it adds)."""
    return build(*arguments)


# A student's charts, in their session: those the view's last run drew and this run's, no more than one run
# of any view draws twice (the compare view's three panels, the all-heads grid and its summary), and no more
# than 8 MB: a layer of pictures at 512 tokens is 1.1 MB.
SESSION_CHARTS = 6
SESSION_CHART_BYTES = 8 * 2**20
_SESSION_CHARTS = "_charts_drawn"
_VIEW_RUN = "_view_run"


def new_run() -> None:
    """A run of the view begins (streamlit_app.explore): the charts it draws are kept in the session for the
    next run, and a chart can tell whether the browser still shows it from the run before (scrub)."""
    st.session_state[_VIEW_RUN] = view_run() + 1


def view_run() -> int:
    """The number of the view's run in this session (0 before the first)."""
    return st.session_state.get(_VIEW_RUN, 0)


def chart_data(build: Callable[..., dict], *arguments) -> dict[str, bytes]:
    """build(*arguments), a chart's datasets by name (DataFrames or Arrow tables), kept as the Arrow
    bytes st.vega_lite_chart sends: a layer's heads as pictures take a dozen PNG encodings, and a
    DataFrame of many columns takes Streamlit tens of ms to convert (the neuron view's numbers of one
    query of a 472-token text: 100 ms), which a move that only reports the head shown must not pay again.

    Kept twice over: in the shared cache, where students with the same text meet, and the student's last
    charts in their own session (SESSION_CHARTS). A move the browser has drawn already reruns the page with
    the same datasets; in a class of long texts, everybody's current charts were more than the shared cache
    held, and its least recently used entry, the next student's, was pushed out on nearly every move."""
    key, run = (_builder_name(build), arguments), view_run()
    held = st.session_state.setdefault(_SESSION_CHARTS, collections.OrderedDict())  # key -> (run, datasets)
    if key in held:
        held[key] = (run, held[key][1])
        held.move_to_end(key)
        return held[key][1]
    with heavy_work():
        datasets = _chart_data(key[0], build, *arguments)
    held[key] = (run, datasets)
    for old in [other for other, (drawn, _) in held.items() if drawn < run - 1]:  # no longer on the page
        del held[old]
    while len(held) > SESSION_CHARTS or (len(held) > 1 and _bytes(held.values()) > SESSION_CHART_BYTES):
        held.popitem(last=False)
    return datasets


def _bytes(kept: Iterable[tuple[int, dict[str, bytes]]]) -> int:
    return sum(len(data) for _, datasets in kept for data in datasets.values())


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["chart_data"], max_size=BUDGET.cache_bytes("chart_data"))
def _chart_data(builder: str, _build: Callable[..., dict], *arguments) -> dict[str, bytes]:
    """Keyed on the builder's name and the arguments (Streamlit leaves out a parameter named with _)."""
    return _arrow_bytes(_build(*arguments))


def drawn_chart(build: Callable[..., alt.TopLevelMixin], *arguments, **options) -> tuple[dict, dict[str, bytes]]:
    """build(*arguments, **options), an Altair chart, as its bare spec and the Arrow bytes of its datasets
    (charts.spec_and_frames), kept: a heatmap of a 474-token text takes Altair 14 to 18 ms to build, and a lesson
    step draws two or three of them on every rerun. The arguments may hold arrays: the key is their contents."""
    return _drawn_chart(_builder_name(build), build, arguments, options)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["drawn_chart"], max_size=BUDGET.cache_bytes("drawn_chart"))
def _drawn_chart(builder: str, _build: Callable[..., alt.TopLevelMixin], arguments: tuple, options: dict
                 ) -> tuple[dict, dict[str, bytes]]:
    """Keyed on the builder's name, the arguments and the options (Streamlit leaves out a parameter named with _)."""
    spec, frames = spec_and_frames(_build(*arguments, **options))
    return spec, _arrow_bytes(frames)


def _builder_name(build: Callable) -> str:
    """What a kept chart is keyed on in place of its builder, which Streamlit cannot hash: its full name."""
    return f"{build.__module__}.{build.__qualname__}"


def _arrow_bytes(frames: dict) -> dict[str, bytes]:
    """Datasets by name (DataFrames or Arrow tables) as the Arrow bytes st.vega_lite_chart sends."""
    return {name: dataframe_util.convert_anything_to_arrow_bytes(frame) for name, frame in frames.items()}


@st.cache_resource(show_spinner=False)
def classes() -> class_store.ClassStore:
    """Where the classes live (components/class_store.py): one store per server process, which every session
    meets; in Redis when ATTENTION_ANATOMY_CLASS_STORE names one, so that replicas meet there too."""
    return class_store.from_setting(os.environ.get(class_store.STORE_ENV))
