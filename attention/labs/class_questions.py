"""The answers to the questions a teacher asks the class about what the page shows, computed from the same numbers.

Each function takes what the page's view draws (one head's weights, a layer's, one row of scaled scores) and returns
the choices offered to the class, the index of the right one and a sentence saying how it was computed, which the
page shows at the reveal:

- most_attended_key: which key a query token gives the largest weight in one head (the argmax of its row);
- previous_token_head: which head of a layer is a previous-token head: the one whose mean weight on the token just
  before, α[i, i − 1] over the queries i = 1 … T − 1, is highest (head_scores.previous_token_score, TransformerLens's
  measure);
- row_sums_to_one: whether a query's row of weights still sums to 1 after the mask: the mask sets the masked keys'
  scores to −∞ before the softmax, which then shares all of the weight among the keys left;
- entropy_when_head_size_doubles: what the softmax's mean entropy does when d_k doubles and the scores are not
  divided by √d_k, on random unit-variance queries and keys (the scaling lab's measure): var(q · k) = d_k, so the
  scores spread out and the weights sharpen.

Shapes: T tokens, nh heads, R rows of random scores. No Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attention.analyses.head_scores import previous_token_score
from attention.labs.scaling_lab import random_scores_by_head_size, softmax_statistics_by_head_size

MAX_CHOICES = 24  # a question offers at most this many tokens or heads: a phone lists them
ROW_SUM_TOLERANCE = 1e-5  # float32: a row of softmax weights sums to 1 within this
SAME_ENTROPY = 0.01  # entropies within 1 % of each other "stay about the same"
ENTROPY_CHOICES = ("It rises", "It falls", "It stays about the same")
YES_NO = ("Yes", "No")
RANDOM_ROWS = 256  # rows of random scores the entropy is averaged over


@dataclass(frozen=True)
class Computed:
    """A question's choices, the index of the page's answer among them, and how it was computed."""

    choices: tuple[str, ...]
    answer: int
    why: str


def token_labels(tokens: Sequence[str]) -> tuple[str, ...]:
    """Each token with its position, so that a word the text holds twice is two choices: "flies (2)"."""
    return tuple(f"{token} ({position})" for position, token in enumerate(tokens))


def most_attended_key(weights: np.ndarray, tokens: Sequence[str], query: int) -> Computed:
    """(T, T) one head's weights: the key query gives its largest weight. With more than MAX_CHOICES tokens, the
    choices are the MAX_CHOICES keys of largest weight, in the text's order."""
    row = np.asarray(weights, dtype=np.float32)[query]  # (T,)
    if not 0 <= query < row.shape[0] or row.shape[0] != len(tokens):
        raise ValueError(f"query must be one of the {len(tokens)} tokens; got {query}")
    keys = np.arange(row.shape[0]) if row.shape[0] <= MAX_CHOICES else np.sort(np.argsort(-row)[:MAX_CHOICES])
    best = int(np.argmax(row))
    labels = token_labels(tokens)
    return Computed(tuple(labels[key] for key in keys), int(np.flatnonzero(keys == best)[0]),
                    f"{labels[query]} gives {labels[best]} a weight of {row[best]:.3f}, the largest of its row "
                    f"(the next largest is {np.sort(row)[-2]:.3f}).")


def previous_token_head(weights: np.ndarray) -> Computed:
    """(nh, T, T) a layer's weights: the head whose mean weight on the token just before is highest, among the
    first MAX_CHOICES heads."""
    # A copy: a cached layer's weights arrive read-only, and torch warns of a tensor it may not write
    heads = np.array(weights[:MAX_CHOICES], dtype=np.float32)  # (nh, T, T)
    scores = previous_token_score(torch.from_numpy(heads)).numpy()  # (nh,)
    best = int(np.argmax(scores))
    runner_up = float(np.sort(scores)[-2]) if len(scores) > 1 else float("nan")
    return Computed(tuple(f"Head {head}" for head in range(len(scores))), best,
                    f"Head {best} puts {scores[best]:.2f} of each query's weight, on average, on the token just "
                    f"before it (the mean of α[i, i−1]); the next head puts {runner_up:.2f} there.")


def row_sums_to_one(scaled_row: np.ndarray, allowed_row: np.ndarray) -> Computed:
    """(T,) one query's scaled scores and (T,) which keys the mask lets it see: whether softmax(masked) sums to 1;
    why compares it with zeroing the same keys after the softmax, which would not."""
    scaled = torch.as_tensor(np.asarray(scaled_row, dtype=np.float32))  # (T,)
    allowed = torch.as_tensor(np.asarray(allowed_row, dtype=bool))  # (T,)
    weights = torch.softmax(scaled.masked_fill(~allowed, float("-inf")), dim=-1)  # (T,)
    total = float(weights.sum())
    zeroed_after = float(torch.softmax(scaled, dim=-1)[allowed].sum())
    sums_to_one = abs(total - 1.0) <= ROW_SUM_TOLERANCE
    masked = int((~allowed).sum())
    return Computed(YES_NO, 0 if sums_to_one else 1,
                    f"The mask hides {masked} of {len(allowed)} keys before the softmax (their scores become −∞), "
                    f"so the softmax shares all the weight among the {len(allowed) - masked} keys left: the row "
                    f"sums to {total:.6f}. Zeroing the same keys after the softmax would leave {zeroed_after:.4f}.")


def entropy_when_head_size_doubles(head_size: int, tokens: int, seed: int = 0) -> Computed:
    """The softmax's mean entropy (nats) over RANDOM_ROWS rows of tokens random unit-variance keys, unscaled, at
    head_size and at twice head_size: rises, falls, or stays within SAME_ENTROPY."""
    if head_size < 1 or tokens < 2:
        raise ValueError(f"head_size must be at least 1 and tokens at least 2; got {head_size}, {tokens}")
    sizes = (head_size, 2 * head_size)
    scores = random_scores_by_head_size(sizes, tokens, RANDOM_ROWS, seed)  # (2, R, T)
    entropy = softmax_statistics_by_head_size(scores, sizes, ("none",))["none"]["entropy"]  # (2,)
    before, after = float(entropy[0]), float(entropy[1])
    answer = 2 if abs(after - before) <= SAME_ENTROPY * before else (0 if after > before else 1)
    return Computed(ENTROPY_CHOICES, answer,
                    f"Unscaled, on random queries and keys over {tokens} tokens, the mean entropy of the weights is "
                    f"{before:.3f} nats at d_k = {head_size} and {after:.3f} at d_k = {2 * head_size}: var(q · k) "
                    f"= d_k, so doubled scores spread wider and the softmax sharpens (a uniform row has "
                    f"{np.log(tokens):.3f}).")
