"""The counting and induction labs' charts said in words, for a screen reader: each chart's text alternative,
computed from the numbers it draws (views/counting.curves_chart, counting_maps.py, induction.py). Short: where a
curve started and ended, which cells or heads stand out and by how much, numbers to two decimals. Letters and
tokens quoted as Python writes a string (repr)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from components.charts.chart_text import largest_cells
from components.charts.induction import GROUPS, group_name

MAP_CELLS = 2  # cells named per counting map: two maps' three each ran past a sentence a reader holds


def describe_count_curves(losses: np.ndarray, accuracy_steps: np.ndarray, accuracies: np.ndarray, total: int,
                          target: float) -> str:
    """The counting lab's loss and accuracy curves: losses (steps_run,) the training loss per step from 1;
    accuracies (M,) held-out, measured at accuracy_steps (M,); total the steps asked for, target the dashed line."""
    said = (f"Training curves, step {len(losses)} of {total}: the training loss went from {losses[0]:.2f} at step 1 "
            f"to {losses[-1]:.2f}")
    if not len(accuracies):
        return said + "; held-out accuracy is not measured yet."
    passed = np.flatnonzero(np.asarray(accuracies) >= target)
    return (said + f"; held-out accuracy from {accuracies[0]:.2f} at step {int(accuracy_steps[0])} to "
            f"{accuracies[-1]:.2f} at step {int(accuracy_steps[-1])}, "
            + (f"passing {target:.2f} at step {int(accuracy_steps[passed[0]])}." if len(passed)
               else f"below {target:.2f} throughout."))


def describe_count_maps(window: Sequence[str], symbols: Sequence[str], window_weights: np.ndarray,
                        symbol_weights: np.ndarray) -> str:
    """The counting lab's two maps at the window size shown: window_weights (W, W) the window attending to itself,
    symbol_weights (S, W) each symbol's question to it; a position named with its index, '3: A'."""
    positions = [f"{index}: {letter}" for index, letter in enumerate(window)]

    def largest(matrix: np.ndarray, rows: Sequence[str]) -> str:
        return "; ".join(f"{rows[row]!r} → {positions[column]!r} {matrix[row, column]:.2f}"
                         for row, column in largest_cells(matrix, MAP_CELLS))

    return (f"The counting maps, window size {len(window)}. Position × position, largest: "
            f"{largest(window_weights, positions)}. Each symbol's question, largest: "
            f"{largest(symbol_weights, symbols)}.")


def head_groups(one: np.ndarray, two: np.ndarray) -> dict[str, np.ndarray]:
    """{group name: (X, nh)} from a score of both models, one (X, 1, nh) and two (X, 2, nh): the maps' groups."""
    models = {1: one, 2: two}
    return {group_name(layers, layer): models[layers][:, layer] for layers, layer in GROUPS}


def _best(scores: dict[str, np.ndarray], at: int = -1) -> tuple[str, int, float]:
    """The group, head and value of the largest score at index `at` (of the (X, nh) arrays), first found on ties."""
    group = max(scores, key=lambda name: scores[name][at].max())
    head = int(scores[group][at].argmax())
    return group, head, float(scores[group][at, head])


def describe_induction_curves(steps: np.ndarray, losses: dict[str, np.ndarray], previous: dict[str, np.ndarray],
                              induction: dict[str, np.ndarray], threshold: float) -> str:
    """The induction lab's curves: steps (M,) measured; losses {"1 layer", "2 layers": (M,)} on the repeated part;
    previous and induction: head_groups' scores (M, nh) each; threshold the dashed line."""
    (one, two), last = losses.values(), int(steps[-1])
    said = [f"Training curves, steps {int(steps[0])} to {last}: the loss on the repeated part went from "
            f"{one[0]:.2f} to {one[-1]:.2f} with one layer, from {two[0]:.2f} to {two[-1]:.2f} with two."]
    for kind, scores in (("previous-token", previous), ("induction", induction)):
        group, head, value = _best(scores)
        said.append(f"Highest {kind} score at step {last}: {value:.2f}, {group}, head {head}.")
    return " ".join(said) + f" Dashed line: {threshold:.2f}."


def describe_induction_maps(kept_steps: np.ndarray, previous: dict[str, np.ndarray],
                            induction: dict[str, np.ndarray]) -> str:
    """The induction lab's maps, every kept step sent and one picked in the browser (no rerun follows it): the
    strongest stripe of each kind at the last kept step, against the same head at the first. previous and
    induction: head_groups' scores on the example, (K, nh) each, at kept_steps (K,)."""
    first, last = int(kept_steps[0]), int(kept_steps[-1])
    if len(kept_steps) == 1:
        opening = f"Every head's attention at step {last}, the only step kept."
    else:
        opening = (f"Every head's attention at {len(kept_steps)} kept steps, {first} to {last}, picked by the Step "
                   "input, which starts at the last.")
    said = [opening]
    for kind, scores in (("previous-token", previous), ("induction", induction)):
        group, head, value = _best(scores)
        then = f" ({scores[group][0, head]:.2f} at step {first})" if len(kept_steps) > 1 else ""
        said.append(f"At step {last} the highest {kind} score: {value:.2f}, {group}, head {head}{then}.")
    return " ".join(said)
