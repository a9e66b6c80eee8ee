"""Two texts run separately, compared where their tokens align.

Position by position would subtract the weights of different words, so the two token lists
are aligned with difflib.SequenceMatcher first: the difference is taken between the tokens both
texts share, in the same order (notebook 004's "flies" in "time flies like an arrow" and "fruit
flies like a banana"). Shapes: T_a, T_b tokens of each text, K tokens they share.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Change:
    """The aligned (query, key) pair whose weight differs most between the two texts."""

    row: int  # in the aligned (K, K) difference
    column: int
    difference: float  # weight in A − weight in B
    position_a: tuple[int, int]  # (query, key) positions in text A
    position_b: tuple[int, int]  # (query, key) positions in text B


@dataclass(frozen=True)
class HeadChange:
    """A head's largest change between two texts, with the pair's weight in each text."""

    change: Change
    weight_a: float  # at change.position_a in text A
    weight_b: float  # at change.position_b in text B


def aligned_positions(tokens_a: list[str], tokens_b: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Positions (K,) in each text of the tokens they share, matched in order by difflib.SequenceMatcher."""
    matcher = difflib.SequenceMatcher(a=list(tokens_a), b=list(tokens_b), autojunk=False)
    pairs = [(block.a + i, block.b + i) for block in matcher.get_matching_blocks() for i in range(block.size)]
    positions_a, positions_b = zip(*pairs, strict=True) if pairs else ((), ())
    return np.asarray(positions_a, dtype=int), np.asarray(positions_b, dtype=int)


def aligned_difference(weights_a: np.ndarray, weights_b: np.ndarray, positions_a: np.ndarray,
                       positions_b: np.ndarray) -> np.ndarray:
    """(..., K, K) weights_a − weights_b between the aligned tokens, as they are in each full (..., T, T)
    matrix: one matrix, or a stack of heads."""
    return (weights_a[..., positions_a[:, None], positions_a]  # (..., K, K)
            - weights_b[..., positions_b[:, None], positions_b])


def largest_change(difference: np.ndarray, positions_a: np.ndarray, positions_b: np.ndarray) -> Change:
    """The cell of a (K, K) aligned difference with the largest |A − B|, and where it sits in each text."""
    row, column = np.unravel_index(np.abs(difference).argmax(), difference.shape)
    return Change(
        row=int(row),
        column=int(column),
        difference=float(difference[row, column]),
        position_a=(int(positions_a[row]), int(positions_a[column])),
        position_b=(int(positions_b[row]), int(positions_b[column])),
    )


def largest_changes(weights_a: np.ndarray, weights_b: np.ndarray, positions_a: np.ndarray,
                    positions_b: np.ndarray) -> tuple[HeadChange, ...]:
    """For each head of the weights (nh, T_a, T_a) and (nh, T_b, T_b), the aligned pair with the largest
    |A − B| (largest_change) and its weight in each text: a few numbers per head, where the weights are
    megabytes."""
    changes = []
    for head_a, head_b in zip(weights_a, weights_b, strict=True):  # (T_a, T_a), (T_b, T_b)
        change = largest_change(aligned_difference(head_a, head_b, positions_a, positions_b), positions_a,
                                positions_b)  # from the (K, K) difference
        changes.append(HeadChange(change, float(head_a[change.position_a]), float(head_b[change.position_b])))
    return tuple(changes)
