"""What the heads move, α·‖f(x)‖ (Kobayashi et al. 2020), and where a layer's attention parks: key (model name,
text, second text, settings). Read off the layer the charts already keep (layers.layer_weights) and the
projections' output W_O; ‖f(x_j)‖ is (nh, T) floats a layer, the shares (L, P)."""

from __future__ import annotations

import dataclasses

import numpy as np
import streamlit as st

from attention.analyses import parks
from attention.dissect import heads, value_norms
from attention.dissect.trace import projections_for
from attention.stages.projections import Linear
from attention.stages.settings import TraceSettings
from components.caches.budget import CACHE_ENTRIES
from components.caches.layers import layer_weights, trace, whole_layer
from components.caches.models import model
from components.caches.texts import encoding
from components.caches.work import heavy_work


def output_projection(name: str, settings: TraceSettings) -> Linear | None:
    """W_O of settings' source and layer, which what a head moves is measured through (None: identity)."""
    return projections_for(model(name), settings).output


def head_moved(name: str, text: str, text_b: str, settings: TraceSettings) -> np.ndarray:
    """(T, T) α_ij·‖f(x_j)‖ of settings' head, read off its trace ("V split") and W_O: the CSV's alpha_fx_norm."""
    with heavy_work():
        one = trace(name, text, text_b, settings)
        norms = heads.head_value_norms(one, [settings.head], output_projection(name, settings))  # (B, 1, T)
        return value_norms.moved(one["weights"][0], norms[0, 0])  # (T, T)


def head_value_norms(name: str, text: str, text_b: str, settings: TraceSettings) -> np.ndarray:
    """(T,) ‖f(x_j)‖ of every key token in settings' head: the bars beside what it moves."""
    return layer_value_norms(name, text, text_b, settings)[settings.head]


def layer_value_norms(name: str, text: str, text_b: str, settings: TraceSettings) -> np.ndarray:
    """(nh, T) ‖f(x_j)‖ of every key token in every head of settings' layer: the lesson's shares of a layer."""
    with heavy_work():
        return _layer_value_norms(name, text, text_b, whole_layer(settings))


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["layer_value_norms"])
def _layer_value_norms(name: str, text: str, text_b: str, settings: TraceSettings) -> np.ndarray:
    """(nh, T): every head's, so that a head move reads them from here."""
    layer = layer_weights(name, text, text_b, settings)
    return heads.head_value_norms(layer, None, output_projection(name, settings))[0]  # (nh, T)


def park_shares(name: str, text: str, text_b: str, settings: TraceSettings, num_layers: int) -> parks.ParkShares:
    """Every layer's share of its heads' attention on the sink tokens and on punctuation, by weight and by what
    moves, under settings at each layer in turn."""
    with heavy_work():
        return _park_shares(name, text, text_b, whole_layer(settings, layer=0), num_layers)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["park_shares"])
def _park_shares(name: str, text: str, text_b: str, settings: TraceSettings, num_layers: int) -> parks.ParkShares:
    tokens = encoding(name, text, text_b)
    places = parks.park_places(tokens.tokens[0], tokens.sinks[0], tokens.special_tokens_mask[0],
                               model(name).family.byte_level)

    def every_layer():  # one layer's weights and norms at a time
        for layer in range(num_layers):
            at = dataclasses.replace(settings, layer=layer)
            weights = heads.head_weights(layer_weights(name, text, text_b, at))  # (B, nh, T, T)
            yield weights, _layer_value_norms(name, text, text_b, at)[None]  # (B, nh, T)

    return parks.park_shares(every_layer(), places)
