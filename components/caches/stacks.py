"""Heads sent to the browser at once: one stage of several heads and layers, and the neuron view's numbers.

HeadStack, AlignedDifference and NeuronStack name such numbers by plain values: a kept chart's datasets are
keyed on them (caches.chart_data), and their values() are computed only when no kept dataset answers."""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

import numpy as np
import streamlit as st

from attention.analyses import compare, neuron
from attention.analyses.neuron import NeuronHeads
from attention.dissect import heads, value_norms
from attention.dissect.trace import LayerAttention, layer_projections
from attention.stages.settings import TraceSettings
from attention.text import segments
from attention.text.words import merge_weights
from components.caches.budget import BUDGET, CACHE_ENTRIES
from components.caches.layers import layer_weights, trace, whole_layer
from components.caches.models import model
from components.caches.moves import output_projection
from components.caches.texts import encoding, layer_encoding, text_words, visible_tokens, visible_words
from components.caches.work import heavy_work


def head_stack(name: str, text: str, text_b: str, settings: TraceSettings, stage: str, layers: tuple[int, ...],
               heads_sent: tuple[int, ...], pair: str = "all", hide_special: bool = False,
               value_norm: bool = False, words: bool = False) -> np.ndarray:
    """(len(layers), len(heads_sent), R, K): one stage (scores, scaled, masked, weights, moved; the context is
    (…, R, d)) of the given heads of the given layers, cut to the rows and keys the pair filter leaves; the weights
    renormalised over the kept keys when the sink tokens are hidden. value_norm: the weights weighted by ‖f(x_j)‖,
    rows summing to 1 again (AttentionViz), before anything else. With words, the weights are between whole words
    (attention/text/words.py), merged after the value weighting and before they are cut and renormalised; the other
    stages stay between tokens. The key leaves out the head.

    The weights are read off layer_weights, which holds them already, and are not kept a second time: a whole
    layer's, uncut, is layer_weights' own array, read-only, not a copy. Nor is any stack kept past its run: the
    run's last one is handed again to whoever asks for it in the same run (_RUNS_LAST), read-only."""
    key = (name, text, text_b, settings, stage, layers, heads_sent, pair, hide_special, value_norm, words)
    if getattr(_RUNS_LAST, "key", None) == key:
        return _RUNS_LAST.values
    values = _head_stack_made(*key)
    values.flags.writeable = False
    _RUNS_LAST.key, _RUNS_LAST.values = key, values
    return values


# The last stack made in this thread: a page's run is a thread of its own, which ends with it. A long text's chart
# text and its zoom read the same stack in one run, where each made it anew (35 ms at 512 tokens, each).
_RUNS_LAST = threading.local()


def _head_stack_made(name: str, text: str, text_b: str, settings: TraceSettings, stage: str, layers: tuple[int, ...],
                     heads_sent: tuple[int, ...], pair: str, hide_special: bool, value_norm: bool,
                     words: bool) -> np.ndarray:
    with heavy_work():
        if stage == "weights":
            shown = text_words(name, text, text_b, words)
            rows, keys = visible_words(shown, pair, hide_special)  # (R,), (K,) of the words (or tokens)
            stacks = [segments.visible_weights(merge_weights(
                _weights(name, text, text_b, whole_layer(settings, layer=layer), heads_sent, value_norm),
                shown.spans), rows, keys, hide_special)  # (h, R, K)
                for layer in layers]
            return stacks[0][None] if len(stacks) == 1 else np.stack(stacks)  # (len(layers), h, R, K)
        return _head_stack(name, text, text_b, whole_layer(settings, layer=0), stage, layers, heads_sent, pair,
                           hide_special)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["head_stack"], max_size=BUDGET.cache_bytes("head_stack"))
def _head_stack(name: str, text: str, text_b: str, settings: TraceSettings, stage: str, layers: tuple[int, ...],
                heads_sent: tuple[int, ...], pair: str, hide_special: bool) -> np.ndarray:
    """A stage other than the weights, computed from the layer's projections for the heads sent (hidden
    sink tokens are left out, never renormalised: these are not weights; nor is what moves)."""
    rows, keys = visible_tokens(encoding(name, text, text_b), pair, hide_special)  # (R,), (K,)
    stacks = []
    for layer in layers:
        at = dataclasses.replace(settings, layer=layer)
        some_heads = heads.head_stage(_heads_source(name, text, text_b, at, heads_sent, weights=False), stage,
                                      heads_sent, output=output_projection(name, at))[0]  # (h, T, T|d)
        if stage == "context":
            stacks.append(some_heads[:, rows])  # (h, R, d)
        else:
            stacks.append(segments.visible_weights(some_heads, rows, keys, False))  # (h, R, K)
    return np.stack(stacks)  # (len(layers), h, R, K or d)


def _weights(name: str, text: str, text_b: str, settings: TraceSettings, heads_sent: tuple[int, ...],
             value_norm: bool) -> np.ndarray:
    """(h, T, T) the weights of the heads sent, or (value_norm) the same weighted by ‖f(x_j)‖, rows summing to 1."""
    source = _heads_source(name, text, text_b, settings, heads_sent)
    weights = heads.head_weights(source, heads_sent)[0]  # (h, T, T)
    if not value_norm:
        return weights
    norms = heads.head_value_norms(source, heads_sent, output_projection(name, settings))[0]  # (h, T)
    return value_norms.weighted_by_value_norm(weights, norms)  # (h, T, T)


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


@dataclass(frozen=True)
class HeadStack:
    """The numbers a scrubbed heatmap holds: one stage of some heads of some layers of a text."""

    model: str
    text: str
    text_b: str
    settings: TraceSettings  # layer and head at 0: the stack covers them
    stage: str  # scores, scaled, masked, weights, context or moved
    layers: tuple[int, ...]
    heads: tuple[int, ...]
    pair: str = "all"
    hide_special: bool = False
    value_norm: bool = False  # the weights weighted by ‖f(x_j)‖, rows summing to 1
    words: bool = False  # the weights between whole words; the other stages ignore it

    def with_heads(self, heads: tuple[int, ...]) -> HeadStack:
        return dataclasses.replace(self, heads=heads)

    def values(self) -> np.ndarray:
        """(len(layers), len(heads), R, K)"""
        return head_stack(self.model, self.text, self.text_b, self.settings, self.stage, self.layers, self.heads,
                          self.pair, self.hide_special, self.value_norm, self.words)


@dataclass(frozen=True)
class AlignedDifference:
    """The numbers of a difference panel: stack a − stack b where their tokens align (attention/analyses/compare.py)."""

    a: HeadStack
    b: HeadStack
    positions_a: tuple[int, ...]  # (K,) in text A of the tokens the two share
    positions_b: tuple[int, ...]  # (K,) in text B

    @property
    def layers(self) -> tuple[int, ...]:
        return self.a.layers

    @property
    def heads(self) -> tuple[int, ...]:
        return self.a.heads

    def with_heads(self, heads: tuple[int, ...]) -> AlignedDifference:
        return dataclasses.replace(self, a=self.a.with_heads(heads), b=self.b.with_heads(heads))

    def values(self) -> np.ndarray:
        """(len(layers), len(heads), K, K)"""
        return compare.aligned_difference(self.a.values(), self.b.values(), np.asarray(self.positions_a),
                                          np.asarray(self.positions_b))


@dataclass(frozen=True)
class NeuronStack:
    """The numbers the chart holds: the neuron view of some heads and query tokens of one layer of a text."""

    model: str
    text: str
    text_b: str
    settings: TraceSettings  # head at 0: the stack covers the heads
    heads: tuple[int, ...]
    queries: tuple[int, ...]

    def values(self) -> NeuronHeads:
        return neuron_heads(self.model, self.text, self.text_b, self.settings, self.heads)
