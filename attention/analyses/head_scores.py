"""What a head does, in one number each: how much it looks at the token before, and how much it does induction.

Both are TransformerLens's (Nanda et al.): a head's attention weights α on a sequence, read along the stripe the
pattern would fill, as the mean weight there.

- previous-token score: the mean of α[i, i − 1] over the queries i = 1 … T − 1;
- induction score, on n random tokens repeated once (2n tokens): the mean of α[i, i − n + 1] over the second
  half's queries, i = n … 2n − 1. Query i holds the same token as position i − n, and an induction head looks
  at the token after that earlier occurrence, i − n + 1, to copy it as its guess of what comes next.

TransformerLens's head detector (`detect_head(..., "induction_head")`, error measure "mul") sums α over the
same cells and divides by the weight of every row, the first half's included, where no token has been seen
before: on a repeated sequence its induction score is this one times n / 2n, at most 0.5. The scores here
divide by the rows the stripe crosses (as its demo's `induction_score_hook` does), so that 1 is a head that
does nothing else, and the thresholds below read as shares of a head's attention.

Shapes: T tokens (2n for the probe), ... any leading dimensions (batch, heads).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

# A head "became" one when its score first reaches this: half of its attention, or more, on the stripe.
INDUCTION_THRESHOLD = 0.5
PREVIOUS_TOKEN_THRESHOLD = 0.5
KINDS = {"previous_token": ("a previous-token head", PREVIOUS_TOKEN_THRESHOLD),
         "induction": ("an induction head", INDUCTION_THRESHOLD)}


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """(..., T, T) attention weights -> (...): the mean of α[i, i − 1] over i = 1 … T − 1."""
    if weights.shape[-1] < 2:
        raise ValueError(f"a previous-token score needs 2 tokens or more; got {weights.shape[-1]}")
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)  # (..., T − 1) -> (...)


def induction_score(weights: torch.Tensor) -> torch.Tensor:
    """(..., 2n, 2n) attention weights on n tokens repeated once -> (...): the mean of α[i, i − n + 1] over the
    second half's queries i = n … 2n − 1."""
    tokens = weights.shape[-1]
    if tokens < 2 or tokens % 2:
        raise ValueError(f"an induction score reads n tokens repeated once: an even length, 2 or more; got {tokens}")
    n = tokens // 2
    stripe = weights.diagonal(offset=1 - n, dim1=-2, dim2=-1)  # (..., n + 1): α[i, i − n + 1] for i = n − 1 … 2n − 1
    return stripe[..., 1:].mean(dim=-1)  # (..., n): the second half's queries -> (...)


@dataclass(frozen=True)
class HeadEvent:
    """A head of one of the models whose score first reached its kind's threshold at a measured step."""

    layers: int  # the model: 1 or 2 layers
    layer: int  # from 0
    head: int  # from 0
    kind: str  # a key of KINDS
    step: int
    score: float  # its score at that step

    def __str__(self) -> str:  # "layer 1, head 0 became an induction head at step 480"
        return f"layer {self.layer}, head {self.head} became {KINDS[self.kind][0]} at step {self.step}"


def first_crossings(layers: int, kind: str, steps: np.ndarray, scores: np.ndarray) -> list[HeadEvent]:
    """The heads whose score reached KINDS[kind]'s threshold, each at the first measured step it did, in the order
    they did. steps (M,) the measured steps, scores (M, L, nh) every head's score at each."""
    threshold = KINDS[kind][1]
    events = []
    for layer, head in np.ndindex(*scores.shape[1:]):
        above = np.flatnonzero(scores[:, layer, head] >= threshold)
        if above.size:
            first = above[0]
            events.append(HeadEvent(layers, layer, head, kind, int(steps[first]), float(scores[first, layer, head])))
    return sorted(events, key=lambda event: (event.step, event.layer, event.head))
