"""Every head of a layer computed once, and one head's trace made from it: key (model name, text, second text,
settings). A head move then costs one head; the key of what reads every head leaves the head out."""

from __future__ import annotations

import dataclasses

import numpy as np
import streamlit as st

from attention.dissect import heads
from attention.dissect.parity import transformers_weights
from attention.dissect.trace import LayerAttention, Trace, build_trace, layer_attention
from attention.stages.settings import TraceSettings
from components.caches.budget import BUDGET, CACHE_ENTRIES
from components.caches.kept_by_bytes import KeptByBytes
from components.caches.models import model
from components.caches.texts import encoding, layer_encoding
from components.caches.work import heavy_work

# ---- Every head of a layer, computed once: key (model name, text, second text, settings with head 0) ----

# Every head's weights are kept with the layer while they take at most this many floats (64 MB): 12 heads of
# 512 tokens take 3.1 million; a random source with head_dim 1 (C heads) on a long text computes them by parts.
LAYER_WEIGHTS_FLOATS = 2**24


def layer_weights(name: str, text: str, text_b: str, settings: TraceSettings) -> LayerAttention:
    """Every head of settings.layer computed once, with every head's weights when they fit
    (LAYER_WEIGHTS_FLOATS): what the charts' stacks, the proof, the entropies and the rollout read."""
    with heavy_work():
        return _layer(name, text, text_b, whole_layer(settings))


def _layer(name: str, text: str, text_b: str, settings: TraceSettings) -> LayerAttention:
    """Every head of the layer, computed once for every part of the page and every session that reads it."""
    return _kept_layers().get((name, text, text_b, settings), lambda: _attended(name, text, text_b, settings))


# Shared by reference, not pickled: st.cache_data copies a value on every hit, and this one is read two or
# three times a rerun; in a class of long texts, the queued reruns each held their own copies of it. Its arrays
# are read-only (LayerAttention): a caller that wrote into one would change every session's, and raises instead.
# Bounded in bytes, not entries: a chart sends every layer of a short text at once, which the proof, the
# entropies and the rollout read again in the same run; kept one at a time, the 6 layers of a new 32-token text
# were attended 7 times on the one-head view (the proof's layer again) and 24 times on the all-heads view. Six
# layers of 32 tokens take 1.5 MB on the bundled model, one layer of 512 tokens 15 MB.
@st.cache_resource(show_spinner=False)
def _kept_layers() -> KeptByBytes[LayerAttention]:
    return KeptByBytes(BUDGET.cache_bytes("layer"), layer_bytes)


def _attended(name: str, text: str, text_b: str, settings: TraceSettings) -> LayerAttention:
    loaded, tokens = model(name), encoding(name, text, text_b).num_tokens
    fits = settings.num_heads(loaded.shape) * tokens * tokens <= LAYER_WEIGHTS_FLOATS
    return layer_attention(loaded, layer_encoding(name, text, text_b, settings.layer), settings, keep_weights=fits)


def layer_bytes(layer: LayerAttention) -> int:
    """The bytes a layer's arrays hold, an array under several names (identity: Q, K and V are X) once."""
    arrays = [layer.attention_mask, layer.concat, layer.weights, *(layer.projected or {}).values()]
    return sum({id(array): array.nbytes for array in arrays if array is not None}.values())


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["layer_contexts"],
               max_size=BUDGET.cache_bytes("layer_contexts"))
def _layer_contexts(name: str, text: str, text_b: str, settings: TraceSettings) -> LayerAttention:
    """The layer as a trace needs it kept (every head's context: 0.75 MB at 512 tokens), a class's worth:
    a head move then computes one head, and a layer move computes every head once, for both caches."""
    with heavy_work():
        return _layer(name, text, text_b, settings).contexts_only()


def trace(name: str, text: str, text_b: str, settings: TraceSettings) -> Trace:
    """Every step of one head, made anew from the cached layer (its own head's attention, the embeddings and
    the output projection: a few ms at 512 tokens), so that no cache keeps the layer's numbers twice."""
    with heavy_work():
        return build_trace(model(name), layer_encoding(name, text, text_b, settings.layer), settings,
                           _layer_contexts(name, text, text_b, whole_layer(settings)))


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
    """The core's settings for a page state (head_dim only matters for random projections, window only for the
    window mask)."""
    return TraceSettings(
        layer=state.layer,
        head=state.head,
        source=state.source,
        head_dim=state.head_dim if state.source == "random" else None,
        scaling=state.scaling,
        # Values a choice does not use are left at their defaults, so equal settings share a cache entry.
        temperature=state.temperature if state.scaling == "temperature" else 1.0,
        seed=state.seed if state.source == "random" else 0,
        mask=state.mask,
        window=state.window if state.mask == "window" else TraceSettings.window,
    )


# ---- Every head of a layer, and every layer: the key leaves out the head, which none of them reads ----

def entropy_by_layer(name: str, text: str, text_b: str, settings: TraceSettings, num_layers: int) -> np.ndarray:
    """(L, nh): the mean entropy of every head of every layer, under settings at each layer in turn."""
    with heavy_work():
        return _entropy_by_layer(name, text, text_b, whole_layer(settings, layer=0), num_layers)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["entropy_by_layer"])
def _entropy_by_layer(name: str, text: str, text_b: str, settings: TraceSettings, num_layers: int) -> np.ndarray:
    return np.stack([heads.head_entropies(layer_weights(name, text, text_b, dataclasses.replace(settings, layer=layer)))
                     for layer in range(num_layers)])  # (L, nh)


def rollout_by_layer(name: str, text: str, text_b: str, settings: TraceSettings,
                     layers: tuple[int, ...]) -> np.ndarray:
    """(len(layers), T, T): attention rollout through layers 0 to each of layers in turn, for a chart that
    switches layer in the browser."""
    with heavy_work():
        return _rollout_by_layer(name, text, text_b, whole_layer(settings, layer=0), tuple(layers))


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["rollout_by_layer"],
               max_size=BUDGET.cache_bytes("rollout_by_layer"))
def _rollout_by_layer(name: str, text: str, text_b: str, settings: TraceSettings,
                      layers: tuple[int, ...]) -> np.ndarray:
    means = [heads.mean_of_heads(layer_weights(name, text, text_b, dataclasses.replace(settings, layer=layer)))
             for layer in range(max(layers) + 1)]  # each (1, 1, T, T)
    return np.stack([heads.rollout(means[:layer + 1]) for layer in layers])  # (len(layers), T, T)


def whole_layer(settings: TraceSettings, **changes) -> TraceSettings:
    """settings for a whole layer: head 0 stands for any, so one student's head moves keep one entry."""
    return dataclasses.replace(settings, head=0, **changes)
