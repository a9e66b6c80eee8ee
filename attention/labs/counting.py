"""Counting letters: a toy task that one attention head learns on the CPU in seconds.

A window of win_size positions holds random letters out of vocab_size, or blanks; the
model must say how often each letter occurs. Every symbol (A, B, …, and the blank) asks
the window one question: its query meets each position's key, softmax spreads its weight
over the window, and a small readout turns the context it gathered into a count 0..win_size.

Nothing tells two positions apart (there are no position embeddings), so a position's
attention row depends on its letter only: equal letters attend alike by construction, and
training decides where they look. The notebook's hypothesis is that they look at each other.
The share of weight a letter puts on its own positions grows with their number; that share
is what the readout reads the count from.

Letters used in shape comments: B batch, W window positions, S symbols (blank + vocab_size
letters), d head size, H readout units, N count classes (0 to W, so W + 1).
"""

from __future__ import annotations

import math
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attention.labs.threads import one_thread
from attention.stages.dot_product import attend
from attention.stages.limits import SEED, TEMPERATURE, WIN_SIZE_RANGE, IntRange, RealRange, require_choice
from attention.stages.settings import SCALINGS, scaling_divisor

BLANK = "·"  # how a blank position is shown; symbol 0
SYMBOLS = BLANK + string.ascii_uppercase  # symbol i > 0 is the i-th letter
VOCAB_SIZE_RANGE = IntRange(1, 26)  # A to Z at most
HEAD_SIZE_RANGE = IntRange(1, 64)
LEARNING_RATE_RANGE = RealRange(1e-4, 1.0)
STEPS_RANGE = IntRange(1, 20_000)
# The page's sliders, inside the core's ranges (the window's in attention/stages/limits.py, which a link reads): a head
# that still draws legibly, and runs of a few seconds to a minute on a shared 2-core server.
PAGE_HEAD_SIZE = HEAD_SIZE_RANGE.narrowed(1, 32)
PAGE_STEPS = STEPS_RANGE.narrowed(20, 3_000)
# The held-out windows come from their own generator, seeded this far from the training seed.
HELD_OUT_SEED_OFFSET = 1_000_003


@dataclass(frozen=True)
class CountingConfig:
    """One training run. The defaults reach > 90 % held-out accuracy in a few hundred steps."""

    win_size: int = 10  # W, the notebook's window
    vocab_size: int = 5  # letters A to E, as in the notebook's example
    # d: 8 is above the 6 symbols, so every letter can keep its own direction in the values.
    head_size: int = 8
    scaling: str = "sqrt"  # the paper's choice; Q and K learn to make up for any other
    temperature: float = 1.0  # the divisor when scaling == "temperature"
    # Adam at 0.05, decayed to 0 on a cosine over the run: fast at first, precise at the end.
    learning_rate: float = 0.05
    steps: int = 600
    batch_size: int = 64  # fresh random windows every step: the task never runs out of data
    readout_size: int = 64  # H, the readout's hidden units
    eval_every: int = 20  # steps between two held-out measurements
    held_out: int = 1_000  # held-out windows, drawn once per run
    seed: int = 0

    @property
    def num_symbols(self) -> int:  # S: the blank and the letters
        return self.vocab_size + 1

    @property
    def num_classes(self) -> int:  # N: counts 0 to W
        return self.win_size + 1

    @property
    def divisor(self) -> float:
        return scaling_divisor(self.scaling, self.head_size, self.temperature)

    def validate(self) -> CountingConfig:
        """Raise ValueError naming the valid range; return self when all is well."""
        WIN_SIZE_RANGE.require("win_size", self.win_size)
        VOCAB_SIZE_RANGE.require("vocab_size", self.vocab_size)
        HEAD_SIZE_RANGE.require("head_size", self.head_size)
        require_choice("scaling", self.scaling, SCALINGS)
        TEMPERATURE.require("temperature", self.temperature)
        LEARNING_RATE_RANGE.require("learning_rate", self.learning_rate)
        STEPS_RANGE.require("steps", self.steps)
        IntRange(1, 4_096).require("batch_size", self.batch_size)
        IntRange(1, 1_024).require("readout_size", self.readout_size)
        IntRange(1, STEPS_RANGE.high).require("eval_every", self.eval_every)
        IntRange(1, 100_000).require("held_out", self.held_out)
        SEED.require("seed", self.seed)
        return self


class CountingModel(nn.Module):
    """One attention head over one-hot symbols, and a readout from each symbol's context to its count.

    Parameters are drawn from the run's own generator, never the global one, so that two
    sessions training at once neither disturb nor depend on each other.
    """

    def __init__(self, config: CountingConfig, generator: torch.Generator):
        super().__init__()
        symbols, size, units = config.num_symbols, config.head_size, config.readout_size
        self.divisor = config.divisor
        # W_q, W_k, W_v of one-hot symbols (no biases): one_hot(x) · W is row x of W, so each
        # projection is a table with one d-vector per symbol, and projecting is a lookup.
        self.query = _uniform((symbols, size), symbols, generator)  # (S, d)
        self.key = _uniform((symbols, size), symbols, generator)  # (S, d)
        self.value = _uniform((symbols, size), symbols, generator)  # (S, d)
        # The readout sees the context and which symbol asked: the same context means
        # "3 of mine" for one letter and "none of mine" for another.
        self.hidden = _uniform((units, size + symbols), size + symbols, generator)  # (H, d + S)
        self.hidden_bias = _uniform((units,), size + symbols, generator)  # (H,)
        self.counts = _uniform((config.num_classes, units), units, generator)  # (N, H)
        self.counts_bias = _uniform((config.num_classes,), units, generator)  # (N,)

    def forward(self, windows: torch.Tensor):
        """windows (B, W) of symbol ids -> count logits (B, S, N) and every symbol's attention stages."""
        batch, symbols = windows.shape[0], self.query.shape[0]
        stages = attend(self.query.expand(batch, -1, -1),  # (B, S, d): every symbol asks
                        F.embedding(windows, self.key),  # (B, W, d)
                        F.embedding(windows, self.value),  # (B, W, d)
                        None, self.divisor)  # weights (B, S, W), context (B, S, d)
        askers = torch.eye(symbols).expand(batch, -1, -1)  # (B, S, S): which symbol asked, one-hot
        readout = torch.cat([stages.context, askers], dim=-1)  # (B, S, d + S)
        hidden = F.relu(F.linear(readout, self.hidden, self.hidden_bias))  # (B, S, H)
        return F.linear(hidden, self.counts, self.counts_bias), stages  # (B, S, N)

    def self_attention(self, windows: torch.Tensor):
        """The window attending to itself: each position asks with its own letter's query."""
        return attend(F.embedding(windows, self.query), F.embedding(windows, self.key),  # (B, W, d) each
                      F.embedding(windows, self.value), None, self.divisor)  # weights (B, W, W)


@dataclass(frozen=True)
class TrainingStep:
    """What on_step hears after every optimiser step."""

    step: int  # 1 to total
    total: int
    loss: float  # this step's training cross-entropy
    accuracy: float | None  # held-out accuracy, measured on this step; None between measurements
    # The run so far, as train() would return it if stopped here. Its model is the live one:
    # it goes on learning if the run does.
    snapshot: Callable[[], TrainingResult]


@dataclass(frozen=True, eq=False)
class TrainingResult:
    """A run: its config, curves and the trained model. steps_run < config.steps if it was stopped."""

    config: CountingConfig
    losses: np.ndarray  # (steps_run,) training cross-entropy per step
    accuracy_steps: np.ndarray  # (M,) the steps at which held-out accuracy was measured
    accuracies: np.ndarray  # (M,) held-out accuracy at those steps
    seconds: float  # wall time of the training loop
    model: CountingModel

    @property
    def steps_run(self) -> int:
        return len(self.losses)

    @property
    def finished(self) -> bool:
        return self.steps_run == self.config.steps

    @property
    def accuracy(self) -> float:
        """The last held-out accuracy measured (0 if none was)."""
        return float(self.accuracies[-1]) if len(self.accuracies) else 0.0

    def steps_to(self, accuracy: float) -> int | None:
        """The first measured step at which held-out accuracy exceeded `accuracy`."""
        above = np.flatnonzero(self.accuracies > accuracy)
        return int(self.accuracy_steps[above[0]]) if above.size else None


@dataclass(frozen=True)
class CountingTrace:
    """What a trained model does with some windows, as numpy."""

    windows: np.ndarray  # (B, W) symbol ids, 0 = blank
    labels: tuple[tuple[str, ...], ...]  # (B, W) the windows as letters, blanks as BLANK
    self_weights: np.ndarray  # (B, W, W) the window attending to itself
    symbol_weights: np.ndarray  # (B, S, W) each symbol's question to the window (row 0: the blank)
    probabilities: np.ndarray  # (B, S, N) the readout's belief in each count
    predicted_counts: np.ndarray  # (B, S) argmax of probabilities
    true_counts: np.ndarray  # (B, S)


def sample_windows(config: CountingConfig, count: int, generator: torch.Generator) -> torch.Tensor:
    """(count, W) random symbol ids: each position a blank or a letter, all equally likely."""
    return torch.randint(0, config.num_symbols, (count, config.win_size), generator=generator)  # (B, W)


def true_counts(windows: torch.Tensor, num_symbols: int) -> torch.Tensor:
    """(B, W) symbol ids -> (B, S) how often each symbol occurs (column 0 counts the blanks)."""
    return F.one_hot(windows, num_symbols).sum(dim=1)  # (B, S)


def letters(windows: np.ndarray) -> tuple[tuple[str, ...], ...]:
    """Symbol ids as the letters a reader sees, blanks as BLANK."""
    return tuple(tuple(SYMBOLS[int(i)] for i in row) for row in np.asarray(windows))


def accuracy(logits: torch.Tensor, counts: torch.Tensor) -> float:
    """Share of (window, letter) counts predicted exactly; the blank's count is left out."""
    return float((logits.argmax(dim=-1)[:, 1:] == counts[:, 1:]).float().mean())


def train(config: CountingConfig = CountingConfig(),
          on_step: Callable[[TrainingStep], bool | None] | None = None) -> TrainingResult:
    """Train a fresh model from config.seed; on_step may return False to stop early.

    Deterministic for a given config on a given machine: the weights, the training windows
    and the held-out windows all come from private generators, and it runs on one thread.
    """
    config.validate()
    generator = torch.Generator().manual_seed(config.seed)
    model = CountingModel(config, generator)
    held_out, held_out_counts = _held_out(config)  # (M, W), (M, S)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=config.steps)
    losses: list[float] = []
    measured: list[tuple[int, float]] = []
    started = time.perf_counter()

    def snapshot() -> TrainingResult:
        steps, accuracies = zip(*measured, strict=True) if measured else ((), ())
        return TrainingResult(config, np.array(losses, dtype=np.float32), np.array(steps, dtype=np.int64),
                              np.array(accuracies, dtype=np.float32), time.perf_counter() - started, model)

    with one_thread(), torch.enable_grad():
        for step in range(1, config.steps + 1):
            windows = sample_windows(config, config.batch_size, generator)  # (B, W)
            logits, _ = model(windows)  # (B, S, N)
            loss = F.cross_entropy(logits.reshape(-1, config.num_classes),  # (B·S, N)
                                   true_counts(windows, config.num_symbols).reshape(-1))  # (B·S,)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            losses.append(loss.item())
            held_out_accuracy = None
            if step % config.eval_every == 0 or step == config.steps:
                with torch.no_grad():
                    held_out_accuracy = accuracy(model(held_out)[0], held_out_counts)
                measured.append((step, held_out_accuracy))
            if on_step is not None and on_step(TrainingStep(step, config.steps, losses[-1], held_out_accuracy,
                                                            snapshot)) is False:
                if not measured or measured[-1][0] != step:  # a stopped run still ends on a measurement
                    with torch.no_grad():
                        measured.append((step, accuracy(model(held_out)[0], held_out_counts)))
                break
    model.requires_grad_(False)
    return snapshot()


def untrained(config: CountingConfig = CountingConfig()) -> TrainingResult:
    """The model train(config) starts from, before its first step, with its held-out accuracy at step 0:
    what the head does by chance, to compare the trained one with."""
    start = _start(config.validate())
    held_out, held_out_counts = _held_out(config)  # (M, W), (M, S)
    with torch.inference_mode():
        chance = accuracy(start.model(held_out)[0], held_out_counts)
    return replace(start, accuracy_steps=np.zeros(1, dtype=np.int64), accuracies=np.array([chance], dtype=np.float32))


def untrained_windows(config: CountingConfig, sizes: Sequence[int], sample: int = 0) -> dict[int, CountingTrace]:
    """{W: what the model train() starts from does with example window `sample`} for each window size W of sizes,
    the rest of config as it is: the untrained head at every window a page may switch to. Unmeasured (untrained
    measures one size on a thousand windows); a window size's weights are its config's, as train() draws them."""
    traces = {}
    for size in sizes:
        sized = replace(config, win_size=size).validate()
        traces[size] = inspect(_start(sized), example_windows(sized, 1, seed=sample))
    return traces


def _start(config: CountingConfig) -> TrainingResult:
    """train(config)'s model before its first step, with nothing run or measured."""
    model = CountingModel(config, torch.Generator().manual_seed(config.seed))  # train()'s first draws
    model.requires_grad_(False)
    return TrainingResult(config, np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64),
                          np.zeros(0, dtype=np.float32), 0.0, model)


def _held_out(config: CountingConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """(M, W) held-out windows, drawn from a generator of their own, and their true counts (M, S)."""
    generator = torch.Generator().manual_seed((config.seed + HELD_OUT_SEED_OFFSET) % (SEED.high + 1))
    held_out = sample_windows(config, config.held_out, generator)  # (M, W)
    return held_out, true_counts(held_out, config.num_symbols)  # (M, W), (M, S)


def inspect(result: TrainingResult, windows: np.ndarray) -> CountingTrace:
    """Run a trained model on some windows (B, W) and return its attention and counts."""
    config = result.config
    ids = torch.as_tensor(np.asarray(windows), dtype=torch.long)  # (B, W)
    if ids.ndim != 2 or ids.shape[1] != config.win_size or not bool(((ids >= 0) & (ids < config.num_symbols)).all()):
        raise ValueError(f"windows must be (B, {config.win_size}) symbol ids from 0 to {config.vocab_size}")
    with torch.inference_mode():
        logits, stages = result.model(ids)  # (B, S, N), weights (B, S, W)
        probabilities = torch.softmax(logits, dim=-1)  # (B, S, N)
        self_weights = result.model.self_attention(ids).weights  # (B, W, W)
    return CountingTrace(
        windows=ids.numpy(),
        labels=letters(ids.numpy()),
        self_weights=self_weights.numpy(),
        symbol_weights=stages.weights.numpy(),
        probabilities=probabilities.numpy(),
        predicted_counts=probabilities.argmax(dim=-1).numpy(),
        true_counts=true_counts(ids, config.num_symbols).numpy(),
    )


@dataclass(frozen=True)
class LetterCounts:
    """One window's letters (S − 1 of them, the blank left out): true and predicted counts, and attention."""

    letters: tuple[str, ...]  # (S − 1,)
    true: np.ndarray  # (S − 1,) how often each letter occurs
    predicted: np.ndarray  # (S − 1,) the model's count
    confidence: np.ndarray  # (S − 1,) the readout's probability of the count it gave
    own_weight: np.ndarray  # (S − 1,) how much of the letter's attention lands on the positions holding it
    uniform_share: np.ndarray  # (S − 1,) the same if it looked everywhere alike: its count / W


def letter_counts(trace: CountingTrace, index: int = 0) -> LetterCounts:
    """What the model counts in window `index` of a trace, and where each letter's attention went."""
    window = trace.windows[index]  # (W,)
    symbols = np.arange(1, trace.symbol_weights.shape[1])  # (S − 1,) the letters, blank excluded
    holds = window[None, :] == symbols[:, None]  # (S − 1, W): which positions hold each letter
    predicted = trace.predicted_counts[index, symbols]  # (S − 1,)
    return LetterCounts(
        letters=tuple(SYMBOLS[s] for s in symbols),
        true=trace.true_counts[index, symbols],
        predicted=predicted,
        confidence=trace.probabilities[index, symbols, predicted],
        own_weight=(trace.symbol_weights[index, symbols] * holds).sum(axis=-1),
        uniform_share=holds.sum(axis=-1) / window.size,
    )


@dataclass(frozen=True)
class EqualLetters:
    """How the positions of letters that occur more than once in a window attend."""

    spread: float  # the largest difference between the rows of two positions holding the same letter
    own: float  # the mean share of a repeated letter's attention on the positions holding it
    uniform: float  # that share if it looked everywhere alike


def equal_letters(trace: CountingTrace, index: int = 0) -> EqualLetters | None:
    """Rows of equal letters compared, in window `index`; None when no letter occurs twice."""
    window, weights = trace.windows[index], trace.self_weights[index]  # (W,), (W, W)
    repeated = [s for s in range(1, trace.symbol_weights.shape[1]) if (window == s).sum() > 1]
    if not repeated:
        return None
    rows = [weights[window == s] for s in repeated]  # each (n_s, W)
    return EqualLetters(
        spread=max(float(np.abs(r - r[0]).max()) for r in rows),
        own=float(np.mean([r[:, window == s].sum(axis=1).mean() for r, s in zip(rows, repeated, strict=True)])),
        uniform=float(np.mean([(window == s).sum() / window.size for s in repeated])),
    )


def example_windows(config: CountingConfig, count: int = 1, seed: int = 0) -> np.ndarray:
    """(count, W) windows to look at, reproducible from a seed of their own."""
    return sample_windows(config, count, torch.Generator().manual_seed(seed)).numpy()


def _uniform(shape: tuple[int, ...], fan_in: int, generator: torch.Generator) -> nn.Parameter:
    """Drawn as nn.Linear draws its weights and biases: U(-1/√fan_in, 1/√fan_in)."""
    bound = 1 / math.sqrt(fan_in)
    return nn.Parameter(torch.empty(shape).uniform_(-bound, bound, generator=generator))
