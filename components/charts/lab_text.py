"""The scaling lab's charts said in words, for a screen reader: each chart's text alternative, computed from the
numbers it draws (scaling_lab.py's charts). Short: what falls or stays as d_k grows, and by how much, numbers to
two decimals (a variance, which spans thousands, to two significant figures). Tokens quoted as Python writes a
string (repr): the text is data, read aloud as written."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def figure(value: float) -> str:
    """value to two significant figures, written plainly: 510, 1.0, 0.0019 (never 5.1e+02)."""
    return f"{float(f'{value:.2g}'):g}"


def describe_variance(head_sizes: Sequence[int], measured: dict[str, np.ndarray]) -> str:
    """The variance chart's: measured: {"none", "sqrt", "linear": (H,)} var(q·k / divisor) at each of head_sizes."""
    first, last = head_sizes[0], head_sizes[-1]
    none, root, linear = measured["none"], measured["sqrt"], measured["linear"]
    return (f"The spread of q·k: unscaled, its variance grows from {figure(none[0])} at d_k = {first} to "
            f"{figure(none[-1])} at d_k = {last}, as the theory line d_k does; divided by √d_k it stays between "
            f"{figure(root.min())} and {figure(root.max())}; divided by d_k it falls to {figure(linear[-1])}.")


def describe_random_softmax(tokens: int, temperature: float, head_sizes: Sequence[int],
                            statistics: dict[str, dict[str, np.ndarray]]) -> str:
    """The random-softmax chart's at the τ it shows: statistics: {"none", "sqrt", "linear", "temperature":
    {"entropy", "max_weight": (H,)}} at that τ, over random scores of `tokens` keys."""
    none, root = statistics["none"], statistics["sqrt"]
    linear, fixed = statistics["linear"]["entropy"], statistics["temperature"]["entropy"]
    return (f"Softmax over {tokens} random keys: unscaled, the mean entropy falls from {none['entropy'][0]:.2f} to "
            f"{none['entropy'][-1]:.2f} nats as d_k grows from {head_sizes[0]} to {head_sizes[-1]}, the largest "
            f"weight reaching {none['max_weight'][-1]:.2f}; with √d_k it stays between {root['entropy'].min():.2f} "
            f"and {root['entropy'].max():.2f}; with d_k it ends at {linear[-1]:.2f} (uniform: "
            f"{math.log(tokens):.2f}); with τ = {temperature:g}, from {fixed[0]:.2f} to {fixed[-1]:.2f}.")


def describe_trained_heads(layer: int, head_size: int, tokens: int, labels: Sequence[str],
                           entropy: Sequence[float], max_weight: Sequence[float]) -> str:
    """The trained heads' chart's: labels the scalings as the legend names them, entropy and max_weight their
    means over the layer's heads (the bars), in that order."""
    entropies = ", ".join(f"{value:.2f} {label}" for label, value in zip(labels, entropy, strict=True))
    largest = ", ".join(f"{value:.2f}" for value in max_weight)
    return (f"The trained heads of layer {layer} (d_k = {head_size}), averaged over the heads: mean entropy "
            f"{entropies} (uniform: {math.log(tokens):.2f}); mean largest weight {largest}, in that order.")


def describe_temperature(layer: int, head: int, query: str, tokens: Sequence[str], taus: Sequence[float],
                         weights: np.ndarray) -> str:
    """The temperature chart's: weights: (τs, T) the query's row of softmax(scores / τ) at each of taus, over
    tokens; its largest weight at the smallest and the largest τ, and on which key."""
    low, high = int(np.argmax(weights[0])), int(np.argmax(weights[-1]))
    return (f"One row's weights, layer {layer}, head {head}, query {query!r}, at {len(taus)} temperatures: at "
            f"τ = {taus[0]:g} the largest is {weights[0, low]:.2f}, on {tokens[low]!r}; at τ = {taus[-1]:g} it is "
            f"{weights[-1, high]:.2f}, on {tokens[high]!r}, towards the uniform {1 / len(tokens):.2f}.")
