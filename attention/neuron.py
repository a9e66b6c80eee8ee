"""The neuron view: one query token's attention, number by number (as bertviz's neuron view).

q ⊙ k shows which dimensions of the head make a query and a key agree; their sum is
the score; scaling and softmax turn the scores into the weights. Read off a trace of
batch row 0. Shapes: T tokens, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention.trace import Trace


@dataclass(frozen=True)
class NeuronView:
    query_index: int
    query: np.ndarray  # (d,) the query vector q
    keys: np.ndarray  # (T, d) every key vector k_j
    products: np.ndarray  # (T, d) q ⊙ k_j, element by element
    dots: np.ndarray  # (T,) Σ q ⊙ k_j = q · k_j (the raw score, for dot-product similarity)
    scaled: np.ndarray  # (T,) after the scaling choice (and the padding mask)
    weights: np.ndarray  # (T,) softmax of scaled: the query's row of the attention weights


def neuron_view(trace: Trace, query_index: int) -> NeuronView:
    tokens = len(trace.tokens[0])
    if not 0 <= query_index < tokens:
        raise ValueError(f"query_index must be from 0 to {tokens - 1}; got {query_index}")
    query = trace["Q"][0, query_index]  # (d,)
    keys = trace["K"][0]  # (T, d)
    if trace.settings.similarity == "cosine":  # the products of unit vectors sum to the cosine
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        keys = keys / np.clip(np.linalg.norm(keys, axis=-1, keepdims=True), 1e-12, None)
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
