"""The current head as a long table: one row per (query, key) pair, for the CSV download."""

from __future__ import annotations

import numpy as np
import pandas as pd

CSV_COLUMNS = ["query_index", "query_token", "key_index", "key_token", "score", "weight"]


def head_table(tokens: list[str], scaled: np.ndarray, weights: np.ndarray) -> pd.DataFrame:
    """scaled and weights are (T, T): the score before softmax (after scaling) and after it."""
    count = len(tokens)
    query_index, key_index = np.indices((count, count))  # (T, T) each
    names = np.asarray(tokens, dtype=object)
    return pd.DataFrame({
        "query_index": query_index.ravel(),
        "query_token": names[query_index.ravel()],
        "key_index": key_index.ravel(),
        "key_token": names[key_index.ravel()],
        "score": np.asarray(scaled, dtype=np.float32).ravel(),
        "weight": np.asarray(weights, dtype=np.float32).ravel(),
    }, columns=CSV_COLUMNS)


def head_csv(tokens: list[str], scaled: np.ndarray, weights: np.ndarray) -> str:
    # float32 written with 9 significant digits reads back to exactly the same float32.
    return head_table(tokens, scaled, weights).to_csv(index=False, float_format="%.9g")
