"""Contextual representations: how far one token's vector moves as context enters, layer by layer."""

from __future__ import annotations

import numpy as np

from attention.text.encoding import Encoding


def find_token(tokens: tuple[str, ...], word: str) -> int:
    """Position of the first token equal to word (lower-cased); ValueError naming the tokens if absent."""
    wanted = word.lower()
    for position, token in enumerate(tokens):
        if token.lower() == wanted:
            return position
    raise ValueError(f"{word!r} is not one of the tokens: {' '.join(tokens)}")


def similarity_by_layer(first: Encoding, first_index: int, second: Encoding, second_index: int) -> np.ndarray:
    """(L + 1,) cosine similarity of one token in two texts: at the embeddings, then after each layer."""
    similarities = []
    for layer in range(len(first.hidden_states)):
        hidden_a, hidden_b = first.layer_input(layer), second.layer_input(layer)  # (B, T, C) each
        a, b = hidden_a[0, first_index], hidden_b[0, second_index]  # (C,) each
        similarities.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
    return np.asarray(similarities, dtype=np.float32)
