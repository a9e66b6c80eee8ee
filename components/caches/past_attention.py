"""Past the attention layer: the whole block around the heads, one head's softmax in blocks of keys, the logit lens
and greedy generation with a key/value cache. Keys are plain values (model name, text, second text, a layer or a
setting); values are numpy and the core's frozen records of numpy, each computed holding a heavy-work slot.

Letters used in shape comments: B batch (1 here), T tokens, C hidden size, L layers, S steps of a block (or cached
tokens), nh heads, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from attention.analyses.logit_lens import TABLE_TOP_K, LogitLens, logit_lens, residual_lens
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
from attention.labs.induction import TrainedStreams
from attention.stages.settings import TraceSettings
from attention.stages.tiled_softmax import SoftmaxStep, tiled_context
from attention.text.encoding import encode
from components.caches.budget import CACHE_ENTRIES
from components.caches.layers import layer_weights, trace
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


@dataclass(frozen=True)
class TiledRow:
    """One query's row of one head: its softmax and context computed a block of keys at a time (FlashAttention's
    online softmax), beside the trace's own, computed over the whole row at once."""

    query: int
    block_size: int
    steps: tuple[SoftmaxStep, ...]  # each block's running max m, running sum ℓ and rescale, in order
    weights: np.ndarray  # (T,) exp(s − m) / ℓ with the last block's m and ℓ
    plain_weights: np.ndarray  # (T,) the trace's softmax(masked row): torch.softmax over the whole row
    context: np.ndarray  # (d,) the running output o / ℓ after the last block
    plain_context: np.ndarray  # (d,) the trace's weights · V row

    @property
    def weight_difference(self) -> float:
        """The largest |tiled weight − plain weight| over the row's keys."""
        return float(np.abs(self.weights - self.plain_weights).max())

    @property
    def context_difference(self) -> float:
        """The largest |tiled context − plain context| over the head's d numbers."""
        return float(np.abs(self.context - self.plain_context).max())


def tiled_row(name: str, text: str, text_b: str, settings: TraceSettings, query: int, block_size: int) -> TiledRow:
    """Row `query` of head settings.head's masked scores (its softmax's input) through the tiled softmax, block_size
    keys at a time, against the trace's own weights and context. Not cached: the trace is (layers.trace), and one
    row in blocks takes a few ms, 512 one-key blocks some tens."""
    with heavy_work():
        head = trace(name, text, text_b, settings)
        tiled = tiled_context(head["masked"][0, query], head["V"][0], block_size)  # (T,) scores, (T, d) values
        return TiledRow(query=query, block_size=block_size, steps=tuple(step.softmax for step in tiled.steps),
                        weights=tiled.weights.numpy(), plain_weights=head["weights"][0, query],  # (T,), (T,)
                        context=tiled.context.numpy(), plain_context=head["context"][0, query])  # (d,), (d,)


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


def induction_lens(trained: TrainedStreams) -> LogitLens:
    """The logit lens of one of the induction lab's trained decoders on its run's probe sequence, from what the run
    kept of it: the top tokens of a vocabulary smaller than five are all of it. Not cached: (L + 1)·P rows through a
    (C, V) matrix take well under a millisecond."""
    return residual_lens(trained.streams, trained.unembedding, trained.example.tolist(),
                         min(TABLE_TOP_K, trained.unembedding.shape[1]))


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
