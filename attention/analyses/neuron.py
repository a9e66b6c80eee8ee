"""The neuron view: one query token's attention, number by number (as bertviz's neuron view).

q ⊙ k shows which dimensions of the head make a query and a key agree; their sum is
the score; scaling and softmax turn the scores into the weights. Read off a trace of
batch row 0. Shapes: T tokens, d head size, h heads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention.dissect.heads import head_stage
from attention.dissect.trace import Trace


@dataclass(frozen=True)
class NeuronView:
    query_index: int
    query: np.ndarray  # (d,) the query vector q
    keys: np.ndarray  # (T, d) every key vector k_j
    products: np.ndarray  # (T, d) q ⊙ k_j, element by element
    dots: np.ndarray  # (T,) Σ q ⊙ k_j = q · k_j (the raw score, for dot-product similarity)
    scaled: np.ndarray  # (T,) after the scaling choice (and the padding mask)
    weights: np.ndarray  # (T,) softmax of scaled: the query's row of the attention weights


@dataclass(frozen=True)
class NeuronHeads:
    """The neuron view of every query token of some heads at once, for a page that picks the head and the
    query itself: q ⊙ k_j is left to the reader of queries and keys (h·T·T·d numbers, too many to send)."""

    heads: tuple[int, ...]
    queries: np.ndarray  # (h, T, d) every query vector q (of unit length for cosine similarity)
    keys: np.ndarray  # (h, T, d) every key vector k_j (likewise)
    dots: np.ndarray  # (h, T, T) q · k_j of every query and key
    scaled: np.ndarray  # (h, T, T) after the scaling choice (and the padding mask)
    weights: np.ndarray  # (h, T, T) softmax of scaled: every query's row of the attention weights


def neuron_view(trace: Trace, query_index: int) -> NeuronView:
    tokens = len(trace.tokens[0])
    if not 0 <= query_index < tokens:
        raise ValueError(f"query_index must be from 0 to {tokens - 1}; got {query_index}")
    query = _as_compared(trace, trace["Q"][0, query_index])  # (d,)
    keys = _as_compared(trace, trace["K"][0])  # (T, d)
    products = query[None, :] * keys  # (T, d)
    return NeuronView(
        query_index=query_index,
        query=query,
        keys=keys,
        products=products,
        dots=products.sum(axis=-1),  # (T,)
        scaled=trace["masked"][0, query_index],  # (T,)
        weights=trace["weights"][0, query_index],  # (T,)
    )


def neuron_heads(trace: Trace, heads: Sequence[int]) -> NeuronHeads:
    """The neuron view of the given heads of the traced layer, for every query token."""
    chosen = [int(head) for head in heads]
    queries = _as_compared(trace, trace.attended("Q")[0, chosen])  # (h, T, d): a Llama's turned by position
    keys = _as_compared(trace, trace.attended("K")[0, chosen])  # (h, T, d): each query head's own or shared keys
    return NeuronHeads(
        heads=tuple(chosen),
        queries=queries,
        keys=keys,
        dots=queries @ keys.transpose(0, 2, 1),  # (h, T, T)
        scaled=head_stage(trace, "masked", chosen)[0],  # (h, T, T)
        weights=head_stage(trace, "weights", chosen)[0],  # (h, T, T)
    )


def _as_compared(trace: Trace, vectors: np.ndarray) -> np.ndarray:
    """(..., d) the vectors as the similarity compares them: as they are for the dot product, scaled to
    length 1 for the cosine (the products of unit vectors sum to the cosine)."""
    if trace.settings.similarity != "cosine":
        return vectors
    return vectors / np.clip(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12, None)
