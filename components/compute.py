"""The app's caches: the only place the page calls the core.

The model is loaded once per server process and shared by every session (inference
only); the forward pass runs once per text; traces are cached per settings, so moving
a slider back and forth costs nothing. Everything handed to the page is numpy.
"""

from __future__ import annotations

import gc
import os

import numpy as np
import streamlit as st
import torch

from attention import (
    BUNDLED_MODEL,
    Encoding,
    LoadedModel,
    Trace,
    TraceSettings,
    allowed_hub_ids,
    build_trace,
    encode,
    load_model,
    transformers_weights,
)
from attention.heads import head_weights

# One thread per operation: the matrices of one rerun are small, many sessions share two cores, and
# every rerun runs in a fresh thread, where a thread pool per operation costs more than it saves.
torch.set_num_threads(1)

# Folders of local BERT checkpoints the page may offer, separated like PATH ("a:b").
MODEL_DIRS_ENV = "ATTENTION_ANATOMY_MODEL_DIRS"


def model_names() -> tuple[str, ...]:
    """What the model selector offers: the bundled model, the allowed Hub ids, configured folders."""
    folders = [p for p in os.environ.get(MODEL_DIRS_ENV, "").split(os.pathsep) if p.strip()]
    return (BUNDLED_MODEL, *allowed_hub_ids(), *folders)


@st.cache_resource(show_spinner="Loading the model (once per server)…", max_entries=3)
def model(name: str) -> LoadedModel:
    loaded = load_model(name)
    # Nearly half a million long-lived objects (torch, transformers, the weights' wrappers): moved
    # out of the cyclic collector's sight, a full collection takes microseconds instead of 0.4 s.
    gc.freeze()
    return loaded


# One entry per text: a class of 30, each with a text of their own, must not push each other out
# (every move would run the model again). An entry is 0.3 MB for 32 tokens on the bundled model,
# 5.5 MB for 512 tokens, 20 MB for 512 tokens on bert-base.
@st.cache_data(show_spinner="Running the model on the text…", max_entries=40)
def encoding(name: str, text: str, text_b: str) -> Encoding:
    return encode(model(name), text, text_b or None)


# A 512-token trace is about 16 MB: a few dozen of them, not hundreds, fit a 1 GB server.
@st.cache_data(show_spinner=False, max_entries=24)
def trace(name: str, text: str, text_b: str, settings: TraceSettings) -> Trace:
    return build_trace(model(name), encoding(name, text, text_b), settings)


def proof(name: str, text: str, text_b: str, layer: int, head: int) -> float:
    """Largest difference between the from-scratch weights (trained head, √d_k) and transformers'."""
    return float(layer_proof(name, text, text_b, layer)[head])


# Per layer, not per head: transformers computes every head of a layer at once (64 ms at 512 tokens).
@st.cache_data(show_spinner=False, max_entries=128)
def layer_proof(name: str, text: str, text_b: str, layer: int) -> np.ndarray:
    """(nh,): for each head of the layer, the largest |from-scratch weight − transformers' weight|."""
    reference_settings = TraceSettings(layer=layer, source="bert", scaling="sqrt")
    ours = head_weights(trace(name, text, text_b, reference_settings))  # (1, nh, T, T)
    theirs = transformers_weights(model(name), encoding(name, text, text_b), layer)  # (1, nh, T, T)
    return np.abs(ours - theirs).max(axis=(0, 2, 3))


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

