"""Where attention parks: the share of a layer's attention that lands on the sink tokens and on punctuation,
measured in weights α and in what moves, α·‖f(x)‖ (attention/dissect/value_norms.py).

Clark et al. 2019 found that bert-base's middle layers put over half of their attention on [SEP] and read it as a
no-op: a place to park attention a head has no use for. Kobayashi et al. 2020 weighted each α_ij by ‖f(x_j)‖ and
found that the sinks move little: their f is short. Both shares side by side say the same for any model and text.

Shapes: B batch, T tokens, nh heads, L layers, P places.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

PUNCTUATION = (".", ",")
BYTE_LEVEL_SPACE = "Ġ"  # byte-level BPE's mark of a leading space: "Ġ," is a comma after a space
PUNCTUATION_NAME = "“.” and “,”"


@dataclass(frozen=True)
class Places:
    """Where attention may park in one text: each place's name and its key tokens."""

    names: tuple[str, ...]  # "[CLS]", "[SEP]", "“.” and “,”"; GPT-2's "the first token"
    keys: np.ndarray  # (P, T) bool: the tokens of each place


@dataclass(frozen=True)
class ParkShares:
    """Every layer's share of all its heads' attention on each place: by weight, and by what moves."""

    places: tuple[str, ...]
    weight: np.ndarray  # (L, P): Σ α over the place's keys, every head and query, over Σ α
    moved: np.ndarray  # (L, P): the same for α·‖f(x)‖

    def busiest(self) -> tuple[int, int]:
        """(layer, place) of the largest share by weight: where this text's attention parks most."""
        layer, place = np.unravel_index(int(np.argmax(self.weight)), self.weight.shape)
        return int(layer), int(place)


def park_places(tokens: Sequence[str], sinks: np.ndarray, special: np.ndarray, byte_level: bool) -> Places:
    """tokens (T,) as the tokenizer wrote them, sinks (T,) the family's sink tokens, special (T,) its special
    tokens -> the places: the first token (named by itself when it is a special token, as [CLS]), the other sinks
    (named by their tokens, as [SEP]; GPT-2 has none) and the punctuation "." and "," (not a sink)."""
    sinks, special = np.asarray(sinks, dtype=bool), np.asarray(special, dtype=bool)  # (T,) each
    first = np.zeros(len(tokens), dtype=bool)  # (T,)
    first[0] = True
    names, keys = [tokens[0] if special[0] else "the first token"], [first]
    others = sinks & ~first  # (T,)
    if others.any():
        names.append(" and ".join(dict.fromkeys(tokens[i] for i in np.flatnonzero(others))))
        keys.append(others)
    bare = [token.removeprefix(BYTE_LEVEL_SPACE) if byte_level else token for token in tokens]
    punctuation = np.array([token in PUNCTUATION for token in bare]) & ~sinks & ~first  # (T,)
    names.append(PUNCTUATION_NAME)
    keys.append(punctuation)
    return Places(tuple(names), np.stack(keys))  # (P, T)


def park_shares(layers: Iterable[tuple[np.ndarray, np.ndarray]], places: Places) -> ParkShares:
    """layers: each layer's weights (B, nh, T, T) and value norms ‖f(x_j)‖ (B, nh, T), of one text (batch row 0)
    -> every layer's share of its heads' attention on each place, by weight and by what moves. One layer's
    numbers at a time: no (L, nh, T, T) array is made."""
    by_weight, by_moved = [], []
    for weights, norms in layers:
        landed = weights[0].sum(axis=(0, 1))  # (T,): Σ over heads and queries of α_ij, per key j
        moved = np.einsum("hqk,hk->k", weights[0], norms[0])  # (T,): the same of α_ij·‖f(x_j)‖
        by_weight.append(_shares(landed, places.keys))
        by_moved.append(_shares(moved, places.keys))
    return ParkShares(places.names, np.stack(by_weight), np.stack(by_moved))  # (L, P) each


def _shares(landed: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """(T,) what lands on each key and (P, T) the places -> (P,) each place's share of all of it."""
    total = float(landed.sum())
    return (keys @ landed / total if total > 0 else np.zeros(len(keys))).astype(np.float32)  # (P,)
