"""The counting-letters toy: it learns within its budget, honours the scaling, stops when told, and is reproducible."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
import torch

from attention.labs.counting import (
    BLANK,
    HELD_OUT_SEED_OFFSET,
    SYMBOLS,
    CountingConfig,
    CountingModel,
    equal_letters,
    example_windows,
    inspect,
    letter_counts,
    sample_windows,
    train,
    true_counts,
    untrained,
    untrained_windows,
)
from attention.stages.settings import SCALINGS

SHORT = CountingConfig(steps=40, eval_every=10, held_out=200)  # enough to compare runs, not to learn


@pytest.fixture(scope="module")
def trained():
    """The defaults, as the page trains them: seed 0, 600 steps."""
    return train(CountingConfig())


def test_the_defaults_count_above_90_percent_on_held_out_windows_within_their_steps(trained):
    config = CountingConfig()
    assert trained.finished and trained.steps_run == config.steps == 600
    assert trained.accuracy > 0.9, f"held-out accuracy {trained.accuracy:.3f} after {config.steps} steps"
    first = trained.steps_to(0.9)
    assert first is not None and first <= config.steps
    assert trained.accuracy_steps.tolist() == list(range(20, 601, 20))
    assert trained.losses[-50:].mean() < 0.5 * trained.losses[:50].mean(), "the loss falls"


@pytest.mark.parametrize("scaling", SCALINGS)
def test_the_weights_are_softmax_of_q_k_over_the_chosen_divisor(scaling):
    config = CountingConfig(scaling=scaling, temperature=2.5, head_size=6)
    divisor = {"none": 1.0, "sqrt": 6**0.5, "linear": 6.0, "temperature": 2.5}[scaling]
    assert config.divisor == pytest.approx(divisor)
    model = CountingModel(config, torch.Generator().manual_seed(3))
    windows = torch.from_numpy(example_windows(config, 4, seed=1))  # (B, W)
    with torch.no_grad():
        _, stages = model(windows)  # weights (B, S, W)
        keys = model.key[windows]  # (B, W, d): row x of W_k for symbol x
        expected = torch.softmax(model.query @ keys.transpose(1, 2) / divisor, dim=-1)  # (B, S, W)
        torch.testing.assert_close(stages.weights, expected, rtol=1e-6, atol=1e-7)
        self_weights = model.self_attention(windows).weights  # (B, W, W)
        queries = model.query[windows]  # (B, W, d)
        torch.testing.assert_close(self_weights, torch.softmax(queries @ keys.transpose(1, 2) / divisor, dim=-1),
                                   rtol=1e-6, atol=1e-7)


def test_the_scaling_reaches_the_trained_model():
    windows = example_windows(SHORT, 2)
    weights = {s: inspect(train(replace(SHORT, scaling=s, steps=1)), windows).symbol_weights
               for s in ("none", "linear")}
    assert not np.allclose(weights["none"], weights["linear"]), "÷1 and ÷d must give different weights"
    result = train(replace(SHORT, scaling="linear", steps=5))
    trace = inspect(result, windows)
    model = result.model
    with torch.no_grad():
        scores = model.query @ model.key[torch.from_numpy(windows)].transpose(1, 2)  # (B, S, W)
    np.testing.assert_allclose(trace.symbol_weights, torch.softmax(scores / SHORT.head_size, dim=-1).numpy(),
                               rtol=1e-5, atol=1e-7)


def test_a_seed_gives_the_same_run_and_another_seed_another():
    first, again = train(SHORT), train(SHORT)
    np.testing.assert_array_equal(first.losses, again.losses)
    np.testing.assert_array_equal(first.accuracies, again.accuracies)
    for mine, theirs in zip(first.model.parameters(), again.model.parameters(), strict=True):
        torch.testing.assert_close(mine, theirs, rtol=0, atol=0)
    assert not np.array_equal(first.losses, train(replace(SHORT, seed=1)).losses)


def test_two_trainings_at_once_give_what_each_gives_alone():
    configs = [SHORT, replace(SHORT, seed=7, head_size=4)]
    alone = [train(c).losses for c in configs]
    together: dict[int, np.ndarray] = {}
    start = threading.Barrier(2)

    def run(i: int) -> None:
        start.wait()
        together[i] = train(configs[i]).losses

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i in range(2):
        np.testing.assert_array_equal(together[i], alone[i])
    assert torch.get_num_threads() >= 1  # the thread count is handed back (see the next test)


def test_training_hands_the_thread_count_back():
    before = torch.get_num_threads()
    train(replace(SHORT, steps=2))
    assert torch.get_num_threads() == before


def test_on_step_hears_every_step_and_false_stops_the_run():
    heard = []

    def on_step(update):
        heard.append((update.step, update.total, update.accuracy is not None))
        assert update.snapshot().steps_run == update.step
        return update.step < 13

    result = train(SHORT, on_step=on_step)
    assert [step for step, _, _ in heard] == list(range(1, 14))
    assert all(total == SHORT.steps for _, total, _ in heard)
    assert [step for step, _, measured in heard if measured] == [10]
    assert result.steps_run == 13 and not result.finished
    assert result.accuracy_steps.tolist() == [10, 13], "a stopped run ends on a measurement"


def test_inspect_counts_and_draws_as_the_task_says(trained):
    config = trained.config
    windows = example_windows(config, 20, seed=5)  # (B, W)
    trace = inspect(trained, windows)
    assert trace.self_weights.shape == (20, config.win_size, config.win_size)
    assert trace.symbol_weights.shape == (20, config.num_symbols, config.win_size)
    np.testing.assert_allclose(trace.self_weights.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(trace.probabilities.sum(-1), 1.0, atol=1e-5)
    for row, labels, counts in zip(windows, trace.labels, trace.true_counts, strict=True):
        assert labels == tuple(SYMBOLS[i] for i in row)
        seen = Counter(labels)
        assert counts.tolist() == [seen[BLANK]] + [seen[letter] for letter in SYMBOLS[1:config.num_symbols]]
    # Equal letters ask the same question: the same rows, within float32 rounding (the (B, W, W) and the
    # (B, S, W) products are different matrix products, whose sums another CPU orders differently).
    for b, row in enumerate(windows):
        for symbol in set(row.tolist()):
            rows = trace.self_weights[b][row == symbol]
            np.testing.assert_allclose(rows, np.broadcast_to(trace.symbol_weights[b, symbol], rows.shape),
                                       rtol=1e-5, atol=1e-6)
    assert (trace.predicted_counts[:, 1:] == trace.true_counts[:, 1:]).mean() > 0.8


def test_equal_letters_look_at_each_other_more_than_uniform_attention_would(trained):
    config = trained.config
    windows = example_windows(config, 200, seed=9)
    trace = inspect(trained, windows)
    own = (trace.symbol_weights * (windows[:, None, :] == np.arange(config.num_symbols)[None, :, None])).sum(-1)
    present = trace.true_counts[:, 1:] > 0  # (B, letters)
    uniform = trace.true_counts[:, 1:] / config.win_size
    assert own[:, 1:][present].mean() > 1.5 * uniform[present].mean()


def test_true_counts_count_each_symbol():
    windows = torch.tensor([[0, 1, 1, 3], [2, 2, 2, 2]])
    assert true_counts(windows, 4).tolist() == [[1, 2, 0, 1], [0, 0, 4, 0]]


@pytest.mark.parametrize(("change", "message"), [
    ({"win_size": 1}, "win_size must be an integer from 2"),
    ({"vocab_size": 27}, "vocab_size must be an integer from 1 to 26"),
    ({"head_size": 0}, "head_size"),
    ({"scaling": "cubic"}, "scaling must be one of none, sqrt, linear, temperature"),
    ({"learning_rate": 0.0}, "learning_rate must be a number"),
    ({"steps": 2.5}, "steps must be an integer"),
    ({"temperature": float("nan")}, "temperature"),
    ({"seed": -1}, "seed"),
])
def test_a_bad_config_is_refused_with_its_range(change, message):
    with pytest.raises(ValueError, match=message):
        train(replace(CountingConfig(), **change))


def test_letter_counts_read_each_letter_of_a_window_off_the_trace(trained):
    config = trained.config
    windows = example_windows(config, 3, seed=4)
    trace = inspect(trained, windows)
    for index, window in enumerate(windows):
        counts = letter_counts(trace, index)
        assert counts.letters == tuple(SYMBOLS[1:config.num_symbols])
        for position, symbol in enumerate(range(1, config.num_symbols)):
            holds = window == symbol
            assert counts.true[position] == holds.sum() == trace.true_counts[index, symbol]
            assert counts.predicted[position] == trace.probabilities[index, symbol].argmax()
            assert counts.confidence[position] == trace.probabilities[index, symbol].max()
            assert counts.own_weight[position] == pytest.approx(trace.symbol_weights[index, symbol, holds].sum(),
                                                                abs=1e-6)
            assert counts.uniform_share[position] == holds.sum() / config.win_size


def test_equal_letters_compares_the_rows_of_repeated_letters_or_says_there_are_none(trained):
    config = trained.config
    repeated = np.array([[1, 1, 2, 0, 3, 3, 3, 4, 0, 5]])  # A twice, C three times
    alike = equal_letters(inspect(trained, repeated))
    assert alike is not None
    assert alike.spread < 1e-6, "equal letters ask the same question"
    assert alike.uniform == pytest.approx((2 / config.win_size + 3 / config.win_size) / 2)
    assert alike.uniform < alike.own <= 1.0
    assert equal_letters(inspect(trained, np.array([[1, 2, 3, 4, 5, 0, 0, 0, 0, 0]]))) is None


def test_inspect_refuses_windows_of_another_size(trained):
    with pytest.raises(ValueError, match="windows must be"):
        inspect(trained, np.zeros((1, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="symbol ids from 0 to 5"):
        inspect(trained, np.full((1, 10), 6))


def test_the_untrained_head_at_every_window_size_is_what_training_would_start_from_there():
    config = replace(CountingConfig(), vocab_size=3, seed=7)
    traces = untrained_windows(config, range(2, 21), sample=2)
    assert sorted(traces) == list(range(2, 21))
    for size, trace in traces.items():
        sized = replace(config, win_size=size)
        expected = inspect(untrained(sized), example_windows(sized, 1, seed=2))
        assert trace.windows.shape == (1, size) and trace.labels == expected.labels
        for stage in ("self_weights", "symbol_weights", "probabilities", "predicted_counts", "true_counts"):
            np.testing.assert_array_equal(getattr(trace, stage), getattr(expected, stage), err_msg=f"{size} {stage}")
    with pytest.raises(ValueError, match="win_size must be an integer from 2 to 24"):
        untrained_windows(config, [25])


def test_the_untrained_model_is_where_training_starts_and_its_accuracy_is_counted_by_hand():
    config = replace(CountingConfig(), steps=1, learning_rate=1e-3)
    before = untrained(config)
    assert before.steps_run == 0 and list(before.accuracy_steps) == [0]
    after_one = train(config)  # Adam's first step moves every parameter by at most the learning rate
    for name, start in before.model.named_parameters():
        moved = (dict(after_one.model.named_parameters())[name] - start).abs().max().item()
        assert 0 < moved <= config.learning_rate * 1.001, name
    windows = sample_windows(config, config.held_out,
                             torch.Generator().manual_seed(config.seed + HELD_OUT_SEED_OFFSET))  # (M, W)
    with torch.inference_mode():
        guesses = before.model(windows)[0].argmax(-1).numpy()[:, 1:]  # (M, S − 1): the letters' counts
    counts = np.stack([np.bincount(row, minlength=config.num_symbols) for row in windows.numpy()])[:, 1:]
    assert before.accuracy == pytest.approx(float((guesses == counts).mean()))
    assert before.accuracy < 0.9 < train(replace(config, steps=300, learning_rate=0.05)).accuracy
