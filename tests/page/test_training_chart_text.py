"""The counting and induction labs' charts each say what they draw to a screen reader
(components/charts/training_text.py, written by views/parts/scrubbed.said): the numbers named are the core's, a
training run here afresh with the page's seed (attention.labs.counting and induction), and the counting maps' text
follows a move of the maps' own window input."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attention.analyses.head_scores import INDUCTION_THRESHOLD
from attention.labs.counting import CountingConfig, example_windows, inspect, train, untrained
from attention.labs.induction import InductionConfig
from attention.labs.induction import train as train_induction
from attention.labs.induction import untrained as untrained_induction
from components.views.counting import MAPS_KEY
from tests.pages import assert_healthy, chart_texts, open_page, pick_on_chart

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

COUNT_STEPS = 60
# Settings of this file's own: a finished induction run is every session's, and another test's would be shown.
INDUCTION = {"view": "induction", "steps": "100", "heads": "2", "vocab": "16", "seed": "41"}
INDUCTION_CONFIG = InductionConfig(vocab_size=16, heads=2, steps=100, seed=41)


def said_of(page, start: str) -> str:
    [text] = [text for text in chart_texts(page) if text.startswith(start)]
    return text


def largest(matrix: np.ndarray, rows: list[str], columns: list[str]) -> str:
    """The two cells of largest weight, largest first, as 'row' → 'column' 0.41."""
    order = np.argsort(-matrix, axis=None, kind="stable")[:2]
    return "; ".join(f"{rows[i // matrix.shape[1]]!r} → {columns[i % matrix.shape[1]]!r} {matrix.flat[i]:.2f}"
                     for i in order)


def maps_said(trace, config: CountingConfig) -> str:
    positions = [f"{index}: {letter}" for index, letter in enumerate(trace.labels[0])]
    symbols = ["·", *"ABCDEFGHIJ"[:config.vocab_size]]
    return (f"The counting maps, window size {config.win_size}. Position × position, largest: "
            f"{largest(trace.self_weights[0], positions, positions)}. Each symbol's question, largest: "
            f"{largest(trace.symbol_weights[0], symbols, positions)}.")


def test_the_counting_maps_say_the_untrained_heads_largest_weights_and_follow_the_window_input():
    page = open_page(view="counting")
    assert_healthy(page)
    config = CountingConfig()
    assert said_of(page, "The counting maps") == maps_said(inspect(untrained(config), example_windows(config, 1, 0)),
                                                            config)
    pick_on_chart(page, MAPS_KEY, win_size=14)
    assert_healthy(page)
    moved = replace(config, win_size=14)
    assert said_of(page, "The counting maps") == maps_said(inspect(untrained(moved), example_windows(moved, 1, 0)),
                                                            moved)


def test_after_training_the_curves_and_the_maps_say_the_cores_run():
    page = open_page(view="counting")
    page.slider(key="count_steps").set_value(COUNT_STEPS).run()
    page.button(key="count_train").click().run()
    assert_healthy(page)
    config = replace(CountingConfig(), steps=COUNT_STEPS)
    run = train(config)  # the page's run: a seed fixes it
    passed = [int(step) for step, accuracy in zip(run.accuracy_steps, run.accuracies, strict=True) if accuracy >= 0.9]
    assert said_of(page, "Training curves") == (
        f"Training curves, step {COUNT_STEPS} of {COUNT_STEPS}: the training loss went from {run.losses[0]:.2f} at "
        f"step 1 to {run.losses[-1]:.2f}; held-out accuracy from {run.accuracies[0]:.2f} at step "
        f"{int(run.accuracy_steps[0])} to {run.accuracies[-1]:.2f} at step {int(run.accuracy_steps[-1])}, "
        + (f"passing 0.90 at step {passed[0]}." if passed else "below 0.90 throughout."))
    assert said_of(page, "The counting maps") == maps_said(inspect(run, example_windows(config, 1, 0)), config)


def groups(one: np.ndarray, two: np.ndarray) -> dict[str, np.ndarray]:
    """{the maps' group: (X, nh)} of a score of both models, (X, 1, nh) and (X, 2, nh)."""
    return {"1 layer: layer 0": one[:, 0], "2 layers: layer 0": two[:, 0], "2 layers: layer 1": two[:, 1]}


def best(scores: dict[str, np.ndarray], at: int = -1) -> tuple[str, int]:
    values = [(float(matrix[at, head]), -order, name, head) for order, (name, matrix) in enumerate(scores.items())
              for head in range(matrix.shape[1])]
    _, _, name, head = max(values, key=lambda value: value[:2])
    return name, head


def induction_maps_said(run) -> str:
    one, two = run.models
    steps = run.kept_steps.tolist()
    said = [f"Every head's attention at step {steps[-1]}, the only step kept." if len(steps) == 1 else
            f"Every head's attention at {len(steps)} kept steps, {steps[0]} to {steps[-1]}, picked by the Step input, "
            "which starts at the last."]
    for kind, scores in (("previous-token", groups(one.kept_previous_token, two.kept_previous_token)),
                         ("induction", groups(one.kept_induction, two.kept_induction))):
        name, head = best(scores)
        then = f" ({scores[name][0, head]:.2f} at step {steps[0]})" if len(steps) > 1 else ""
        said.append(f"At step {steps[-1]} the highest {kind} score: {scores[name][-1, head]:.2f}, {name}, "
                    f"head {head}{then}.")
    return " ".join(said)


def test_the_induction_maps_before_training_say_the_untrained_heads_scores():
    page = open_page(INDUCTION)
    assert_healthy(page)
    assert said_of(page, "Every head's attention") == induction_maps_said(untrained_induction(INDUCTION_CONFIG))


def test_after_training_the_induction_curves_and_maps_say_the_cores_run():
    page = open_page(INDUCTION)
    page.button(key="induction_train").click().run()
    assert_healthy(page)
    run = train_induction(INDUCTION_CONFIG)  # the page's run: a seed fixes it
    one, two = run.models
    last = int(run.measured_steps[-1])
    said = [f"Training curves, steps 0 to {last}: the loss on the repeated part went from {one.repeated_loss[0]:.2f} "
            f"to {one.repeated_loss[-1]:.2f} with one layer, from {two.repeated_loss[0]:.2f} to "
            f"{two.repeated_loss[-1]:.2f} with two."]
    for kind, scores in (("previous-token", groups(one.previous_token, two.previous_token)),
                         ("induction", groups(one.induction, two.induction))):
        name, head = best(scores)
        said.append(f"Highest {kind} score at step {last}: {scores[name][-1, head]:.2f}, {name}, head {head}.")
    assert said_of(page, "Training curves") == " ".join(said) + f" Dashed line: {INDUCTION_THRESHOLD:.2f}."
    assert said_of(page, "Every head's attention") == induction_maps_said(run)
    assert len(run.kept_steps) > 1
