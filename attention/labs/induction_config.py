"""The induction lab's settings, without torch: the page's link parser reads their defaults before torch is
imported (attention/labs/induction.py trains with them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from attention.stages.limits import (
    INDUCTION_HEADS,
    INDUCTION_LEARNING_RATE,
    INDUCTION_PERIOD,
    INDUCTION_STEPS,
    INDUCTION_TOKENS,
    INDUCTION_VOCAB,
    SEED,
    IntRange,
    RealRange,
)

KEPT_CHECKPOINTS = 20  # about this many kept attention snapshots per run, and the one before training
MEASUREMENTS = 40  # about this many measurements per run, and the one before training
MEASURE_EVERY_LEAST = 5  # steps between two measurements at least: a short run is not measured more than it trains


@dataclass(frozen=True)
class InductionConfig:
    """One run of both models. The defaults show the contrast within a minute on one thread (README, bench)."""

    vocab_size: int = 32  # V: tokens 0 to 31; a period of 12 rarely holds a token twice
    period_low: int = 4  # each sequence's period is drawn from period_low to period_high, all equally likely
    period_high: int = 12
    heads: int = 4  # nh per layer: room for a previous-token head and a spare or two
    steps: int = 600  # the two-layer model's first induction head forms around step 315 to 345 with these
    seed: int = 0
    tokens: int = 24  # T: two periods of the longest, so that every sequence repeats
    width: int = 64  # C, the residual stream
    head_size: int = 16  # d: the heads' own width, whatever their number
    # Fresh random sequences every step: the task never runs out of data. 64 formed the first induction head about 60
    # steps sooner (step 255) but took a third longer to train, on four seeds.
    batch_size: int = 32
    learning_rate: float = 3e-3  # AdamW; constant, so that the phase change is the data's, not a schedule's
    weight_decay: float = 0.01
    # Measuring costs as much as a few steps: 128 held-out sequences hold about 2,000 targets of the repeated part,
    # and 32 probes 384 queries in their second half, for every head's scores.
    held_out: int = 128  # held-out sequences for the loss on the repeated part, drawn once per run
    probes: int = 32  # probe sequences (n random tokens repeated once) for the heads' scores

    @property
    def probe_half(self) -> int:
        """n, the probe's distinct tokens (then repeated once): half the sequence, or the whole vocabulary."""
        return min(self.tokens // 2, self.vocab_size)

    @property
    def measure_every(self) -> int:
        return max(MEASURE_EVERY_LEAST, math.ceil(self.steps / MEASUREMENTS))

    @property
    def keep_every(self) -> int:
        return max(1, math.ceil(self.steps / KEPT_CHECKPOINTS))

    def validate(self) -> InductionConfig:
        """Raise ValueError naming the valid range; return self when all is well."""
        INDUCTION_VOCAB.require("vocab_size", self.vocab_size)
        INDUCTION_TOKENS.require("tokens", self.tokens)
        shorter = INDUCTION_PERIOD.narrowed(1, self.tokens - 1)
        shorter.require("period_low", self.period_low, f"shorter than the {self.tokens} tokens")
        IntRange(self.period_low, shorter.high).require("period_high", self.period_high,
                                                        "from period_low to tokens − 1")
        INDUCTION_HEADS.require("heads", self.heads)
        INDUCTION_STEPS.require("steps", self.steps)
        IntRange(1, 1_024).require("width", self.width)
        IntRange(1, 256).require("head_size", self.head_size)
        IntRange(1, 4_096).require("batch_size", self.batch_size)
        INDUCTION_LEARNING_RATE.require("learning_rate", self.learning_rate)
        RealRange(0.0, 1.0).require("weight_decay", self.weight_decay)
        IntRange(1, 100_000).require("held_out", self.held_out)
        IntRange(1, 10_000).require("probes", self.probes)
        SEED.require("seed", self.seed)
        return self
