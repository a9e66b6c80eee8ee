"""The all-heads view's other charts, as text a screen reader reads (the grid's is chart_text.describe_layer): the
layer × head overview of mean entropy, and where attention parks. Each is computed from the numbers the chart draws
and kept short (under 300 characters): the few heads or layers that stand out, each with its number."""

from __future__ import annotations

import numpy as np

NAMED = 3  # heads or layers named: more would be a table


def describe_overview(entropy: np.ndarray) -> str:
    """'Every layer and head at a glance: mean entropy in nats of 6 layers × 12 heads, from 0.05 to 1.87. Most
    focused: layer 0, head 2 0.05; …. Most spread out: layer 5, head 3 1.87.' entropy: (L, nh), NaN where a head
    has none (a one-token text): never named."""
    entropy = np.asarray(entropy, dtype=np.float64)  # (L, nh)
    layers, heads = entropy.shape
    known = np.flatnonzero(np.isfinite(entropy))  # flat indices, in (layer, head) order
    start = f"Every layer and head at a glance: mean entropy in nats of {layers} layers × {heads} heads"
    if not known.size:
        return start + ": no head has one."
    order = known[np.argsort(entropy.flat[known], kind="stable")]  # most focused first
    focused = "; ".join(_head(entropy, index) for index in order[:NAMED])
    return (f"{start}, from {entropy.flat[order[0]]:.2f} to {entropy.flat[order[-1]]:.2f}. Most focused: {focused}. "
            f"Most spread out: {_head(entropy, order[-1])}.")


def describe_parks(places: tuple[str, ...], weight: np.ndarray, moved: np.ndarray) -> str:
    """'Where attention parks, 6 layers: each layer's share of its heads' attention on '[CLS]', '[SEP]', '. and ,'.
    Largest by weight: layer 3 on '[SEP]' 62% (12% of what moves); …'. weight, moved: (L, P) shares in [0, 1]."""
    weight, moved = np.asarray(weight, dtype=np.float64), np.asarray(moved, dtype=np.float64)  # (L, P) each
    named = ", ".join(repr(place) for place in places)
    order = np.argsort(-weight, axis=None, kind="stable")[:NAMED]
    largest = "; ".join(f"layer {layer} on {places[place]!r} {weight[layer, place]:.0%} "
                        f"({moved[layer, place]:.0%} of what moves)"
                        for layer, place in (divmod(int(index), weight.shape[1]) for index in order))
    return (f"Where attention parks, {weight.shape[0]} layers: each layer's share of its heads' attention on "
            f"{named}. Largest by weight: {largest}.")


def _head(entropy: np.ndarray, index: int) -> str:
    layer, head = divmod(int(index), entropy.shape[1])
    return f"layer {layer}, head {head} {entropy[layer, head]:.2f}"
