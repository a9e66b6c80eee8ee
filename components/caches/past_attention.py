"""Past the attention layer: the whole block around the heads, the logit lens and greedy generation with a key/value
cache. Keys are plain values (model name, text, second text, a layer or a setting); values are numpy and the core's
frozen records of numpy, each computed holding a heavy-work slot.

Letters used in shape comments: B batch (1 here), T tokens, C hidden size, L layers, S steps of a block (or cached
tokens), nh heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from attention.analyses.logit_lens import LogitLens, logit_lens
from attention.dissect.block import build_block
from attention.dissect.mixing import mixing
from attention.experiments.generation import (
    Generation,
    GenerationSettings,
    StreamingSettings,
    StreamingWhatIf,
    generate,
    streaming_what_if,
)
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.caches.budget import CACHE_ENTRIES
from components.caches.layers import layer_weights
from components.caches.models import language_model, model
from components.caches.texts import layer_encoding
from components.caches.work import heavy_work


@dataclass(frozen=True)
class BlockNumbers:
    """One layer's block on a text as the page draws it: each step's name, formula, shape and per-token norms."""

    layer: int
    placement: str  # "post" (BERT: add, then norm) or "pre" (GPT-2, Llama: norm, then the sublayer, then add)
    norm_name: str  # "LayerNorm" or "RMSNorm"
    names: tuple[str, ...]  # the steps, in the order the layer runs them
    formulas: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]  # each step's (B, T, C)
    norms: np.ndarray  # (S, T) each step's per-token Euclidean norm, of the text (batch row 0)
    written: dict[str, np.ndarray]  # Block.written(), row 0: {name: (T,)}
    contributions: np.ndarray  # (T, T) ‖z̃_ij‖, Kobayashi et al. 2021: what token j wrote into token i
    mixing_ratio: np.ndarray  # (T,) the share of a token's update that came from the other tokens


def block(name: str, text: str, text_b: str, layer: int) -> BlockNumbers:
    """Layer `layer` of the model on the text as the model runs it (its own heads, √d_k, its own mask)."""
    with heavy_work():
        attention = layer_weights(name, text, text_b, TraceSettings(layer=layer))  # the page's own cached heads
        return _block(name, text, text_b, layer, attention)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["block"])
def _block(name: str, text: str, text_b: str, layer: int, _attention) -> BlockNumbers:
    """_attention (left out of the key: the rest makes it) is the layer's every head, as layer_weights keeps it."""
    loaded, encoding = model(name), layer_encoding(name, text, text_b, layer)
    built = build_block(loaded, encoding, layer, _attention)
    mixed = mixing(loaded, encoding, layer)
    return BlockNumbers(
        layer=layer, placement=built.placement, norm_name=built.norm_name, names=built.names,
        formulas=tuple(step.formula for step in built.steps), shapes=tuple(step.shape for step in built.steps),
        norms=np.stack([np.linalg.norm(step.value[0], axis=-1) for step in built.steps]),  # (S, T)
        written={part: norms[0] for part, norms in built.written().items()},  # {name: (T,)}
        contributions=mixed.contributions[0], mixing_ratio=mixed.mixing_ratio[0])  # (T, T), (T,)


def lens(name: str, text: str, text_b: str, top_k: int) -> tuple[LogitLens | None, str | None]:
    """The logit lens of the text, or None and why: a model without a language-model head cannot be read so.
    ValueError (a BERT text without its [MASK]) says what the lens needs."""
    with heavy_work():
        head, why = language_model(name)
        if head is None:
            return None, why
        return _lens(name, text, text_b, top_k), None


@st.cache_data(show_spinner="Reading every layer through the model's head…", max_entries=CACHE_ENTRIES["lens"])
def _lens(name: str, text: str, text_b: str, top_k: int) -> LogitLens:
    head, _ = language_model(name)
    return logit_lens(head, encode(head.model, text, text_b or None), top_k)  # every layer's input kept


def generation(name: str, text: str, new_tokens: int) -> tuple[Generation | None, str | None]:
    """Greedy decoding of new_tokens after the text, every step recorded, or None and why (no head). ValueError:
    a model that does not generate (BERT), or a text that leaves no room."""
    with heavy_work():
        head, why = language_model(name)
        if head is None:
            return None, why
        return _generation(name, text, new_tokens), None


@st.cache_data(show_spinner="Generating, one step a token…", max_entries=CACHE_ENTRIES["generation"])
def _generation(name: str, text: str, new_tokens: int) -> Generation:
    head, _ = language_model(name)
    return generate(head, text, GenerationSettings(max_new_tokens=new_tokens, stop_at_end=False))


def streaming(name: str, text: str, new_tokens: int, sinks: int, window: int) -> StreamingWhatIf:
    """StreamingLLM's what-if on the same budget: the first `sinks` tokens kept beside the last `window`, or
    evicted. Called after generation(), which has said whether the model has a head."""
    with heavy_work():
        return _streaming(name, text, new_tokens, sinks, window)


@st.cache_data(show_spinner="Generating again within a fixed cache…", max_entries=CACHE_ENTRIES["streaming"])
def _streaming(name: str, text: str, new_tokens: int, sinks: int, window: int) -> StreamingWhatIf:
    head, _ = language_model(name)
    return streaming_what_if(head, text, StreamingSettings(sinks=sinks, window=window),
                             GenerationSettings(max_new_tokens=new_tokens, stop_at_end=False))
