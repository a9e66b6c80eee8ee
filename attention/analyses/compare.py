"""Two texts run separately, compared where their tokens align.

Position by position would subtract the weights of different words, so the two token lists
are aligned with difflib.SequenceMatcher first: the difference is taken between the tokens both
texts share, in the same order (notebook 004's "flies" in "time flies like an arrow" and "fruit
flies like a banana"). Shapes: T_a, T_b tokens of each text, K tokens they share.

The changes a learner looks for are between words: [CLS] and [SEP] soak up whatever weight a head does not
spend elsewhere, so their cells change with anything ("too → [CLS]" outranked "it" moving from "animal" to
"street"). The largest changes can leave some shared tokens out, as queries and as keys (leave_out).
"""

from __future__ import annotations

import dataclasses
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
    """A head's largest change between two texts, with the pair's weight in each text; and each query token's."""

    change: Change
    weight_a: float  # at change.position_a in text A
    weight_b: float  # at change.position_b in text B
    by_query: tuple[HeadChange, ...] = ()  # each query token kept, in order: its own largest change


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


def largest_change(difference: np.ndarray, positions_a: np.ndarray, positions_b: np.ndarray,
                   leave_out: np.ndarray | None = None) -> Change | None:
    """The cell of a (K, K) aligned difference with the largest |A − B|, and where it sits in each text; None
    when leave_out (K,) leaves out every token. leave_out: the aligned tokens not counted, as queries or keys."""
    kept = _kept(difference, leave_out)  # (K,)
    if not kept.any():
        return None
    changes = np.where(kept[:, None] & kept, np.abs(difference), -1.0)  # (K, K): left out, below any |change|
    return _change(difference, *np.unravel_index(changes.argmax(), changes.shape), positions_a, positions_b)


def changes_by_query(difference: np.ndarray, positions_a: np.ndarray, positions_b: np.ndarray,
                     leave_out: np.ndarray | None = None) -> tuple[Change, ...]:
    """Each kept query token's largest |A − B| over the kept keys, in the order of the aligned tokens."""
    kept = _kept(difference, leave_out)  # (K,)
    if not kept.any():
        return ()
    changes = np.where(kept, np.abs(difference), -1.0)  # (K, K): left out keys below any |change|
    return tuple(_change(difference, row, changes[row].argmax(), positions_a, positions_b)
                 for row in np.flatnonzero(kept))


def largest_changes(weights_a: np.ndarray, weights_b: np.ndarray, positions_a: np.ndarray,
                    positions_b: np.ndarray, leave_out: np.ndarray | None = None) -> tuple[HeadChange | None, ...]:
    """For each head of the weights (nh, T_a, T_a) and (nh, T_b, T_b), the aligned pair with the largest
    |A − B| (largest_change, leave_out as there) and each kept query token's, with their weights in each text:
    a few numbers per head, where the weights are megabytes. None for a head when every token is left out."""
    found = []
    for head_a, head_b in zip(weights_a, weights_b, strict=True):  # (T_a, T_a), (T_b, T_b)
        difference = aligned_difference(head_a, head_b, positions_a, positions_b)  # (K, K)
        change = largest_change(difference, positions_a, positions_b, leave_out)
        if change is None:
            found.append(None)
            continue
        by_query = tuple(_weighed(query, head_a, head_b)
                         for query in changes_by_query(difference, positions_a, positions_b, leave_out))
        found.append(dataclasses.replace(_weighed(change, head_a, head_b), by_query=by_query))
    return tuple(found)


def _kept(difference: np.ndarray, leave_out: np.ndarray | None) -> np.ndarray:
    """(K,) True for the aligned tokens counted."""
    return np.ones(difference.shape[-1], dtype=bool) if leave_out is None else ~np.asarray(leave_out, dtype=bool)


def _change(difference: np.ndarray, row: int, column: int, positions_a: np.ndarray, positions_b: np.ndarray
            ) -> Change:
    return Change(
        row=int(row),
        column=int(column),
        difference=float(difference[row, column]),
        position_a=(int(positions_a[row]), int(positions_a[column])),
        position_b=(int(positions_b[row]), int(positions_b[column])),
    )


def _weighed(change: Change, head_a: np.ndarray, head_b: np.ndarray) -> HeadChange:
    """The change with its weight in each text's (T, T) weights."""
    return HeadChange(change, float(head_a[change.position_a]), float(head_b[change.position_b]))
