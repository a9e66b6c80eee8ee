"""Sentence pairs and special tokens: which part of the weights matrix to look at.

bertviz's sentence-pair view shows attention from sentence A to sentence B and back;
[CLS] and [SEP] often soak up most of the weight, so hiding them (and renormalising
what is left) shows how the real words share attention among themselves.
"""

from __future__ import annotations

import numpy as np

# Which queries (rows) look at which keys (columns): A is segment 0 ([CLS] A [SEP]), B segment 1 (B [SEP]).
PAIR_FILTERS = {
    "all": (None, None),
    "a_to_b": (0, 1),
    "b_to_a": (1, 0),
    "within_a": (0, 0),
    "within_b": (1, 1),
}


def visible_tokens(token_type_ids: np.ndarray, special: np.ndarray, which: str = "all",
                   hide_special: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the rows (queries) and columns (keys) to show, for one text: arrays of shape (T,)."""
    if which not in PAIR_FILTERS:
        raise ValueError(f"pair filter must be one of {', '.join(PAIR_FILTERS)}; got {which!r}")
    query_segment, key_segment = PAIR_FILTERS[which]
    special = np.asarray(special, dtype=bool)  # (T,): a tokenizer's 0/1 mask too, where ~ would give -1/-2
    token_type_ids = np.asarray(token_type_ids)  # (T,): a plain list compares as a whole, not element-wise
    keep = ~special if hide_special else np.ones_like(special)  # (T,)

    def positions(segment: int | None) -> np.ndarray:
        chosen = keep if segment is None else keep & (token_type_ids == segment)
        return np.flatnonzero(chosen)

    return positions(query_segment), positions(key_segment)


def renormalised(weights: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """(..., T, T) weights restricted to the given key columns, each row rescaled to sum to 1 again."""
    kept = weights[..., keys]  # (..., T, K)
    total = kept.sum(axis=-1, keepdims=True)
    return np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)


def visible_weights(weights: np.ndarray, rows: np.ndarray, keys: np.ndarray, renormalise: bool) -> np.ndarray:
    """(..., T, T) weights -> (..., R, K): the chosen query rows and key columns, each row rescaled to sum
    to 1 if asked. Scores are cut the same way, never renormalised. With every row and key kept and
    nothing renormalised, weights itself (a 512-token layer of 12 heads is 12 MB a copy)."""
    tokens = np.arange(weights.shape[-1])
    if not renormalise and np.array_equal(rows, tokens) and np.array_equal(keys, tokens):
        return weights
    kept = renormalised(weights, keys) if renormalise else weights[..., keys]  # (..., T, K)
    return kept[..., rows, :]  # (..., R, K)
