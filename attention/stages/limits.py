"""Every limit on what a user may choose, written once, and the checks that enforce them.

The core accepts the widest values its arithmetic survives. The page offers narrower ranges
(a slider has to fit a hand, a browser's number input holds fewer digits than torch); each is
stated here beside the core's and derived from it, so the two cannot disagree. The core's
settings, the counting lab and the page's link parser all check values with these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real


@dataclass(frozen=True)
class IntRange:
    """Integers from low to high (no upper end when high is None); bools are not integers here."""

    low: int
    high: int | None = None

    def __contains__(self, value: object) -> bool:
        return (isinstance(value, Integral) and not isinstance(value, bool)
                and self.low <= value and (self.high is None or value <= self.high))

    def __str__(self) -> str:  # "from 0 to 5", "from 1"
        return f"from {self.low}" + ("" if self.high is None else f" to {self.high}")

    def narrowed(self, low: int, high: int | None) -> IntRange:
        """The part of this range from low to high: a caller's narrower range can never leave it."""
        top = self.high if high is None else high if self.high is None else min(self.high, high)
        return IntRange(max(self.low, low), top)

    def require(self, name: str, value: object, why: str = "") -> None:
        """Raise ValueError naming the range unless value is in it."""
        if value not in self:
            raise ValueError(f"{name} must be an integer {self}{_because(why)}; got {value!r}")


@dataclass(frozen=True)
class RealRange:
    """Finite real numbers from low to high; bools are not numbers here."""

    low: float
    high: float

    def __contains__(self, value: object) -> bool:
        return (isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)
                and self.low <= value <= self.high)

    def __str__(self) -> str:  # "from 0.001 to 1000"
        return f"from {self.low:g} to {self.high:g}"

    def narrowed(self, low: float, high: float) -> RealRange:
        """The part of this range from low to high: a caller's narrower range can never leave it."""
        return RealRange(max(self.low, low), min(self.high, high))

    def require(self, name: str, value: object, why: str = "") -> None:
        """Raise ValueError naming the range unless value is in it."""
        if value not in self:
            raise ValueError(f"{name} must be a number {self}{_because(why)}; got {value!r}")


def one_of(valid: Sequence[str]) -> str:
    """The valid choices as words: "one of none, sqrt, linear"."""
    return f"one of {', '.join(valid)}"


def require_choice(name: str, value: object, valid: Sequence[str]) -> None:
    """Raise ValueError naming every valid choice unless value is one of them."""
    if value not in valid:
        raise ValueError(f"{name} must be {one_of(valid)}; got {value!r}")


def _because(why: str) -> str:
    return f" ({why})" if why else ""


# The core's limits.
SEED = IntRange(0, 2**63 - 1)  # what torch.Generator.manual_seed takes
# Beyond these, softmax of scores / τ overflows to NaN or is indistinguishable from uniform.
TEMPERATURE = RealRange(1e-3, 1e3)
WINDOW = IntRange(1)  # a sliding window sees itself and at least one token back
# Keys per block of the tiled softmax (attention/stages/tiled_softmax.py): one at least, and the row's T at most
# (one block is then the whole row, the softmax in one piece); the row narrows this to (1, T).
SOFTMAX_BLOCK = IntRange(1)


# The page's, inside the core's.
# A browser's number input and a link's number hold integers exactly up to 2^53 − 1 (JavaScript's
# Number.MAX_SAFE_INTEGER); a larger seed would come back from the browser rounded to another one.
PAGE_SEED = SEED.narrowed(0, 2**53 - 1)
# τ on a slider: from scores sharpened twentyfold to scores flattened twentyfold, in 400 steps of 0.05
# that a hand can still pick one by one. The page needs no more of the core's range to show the effect.
PAGE_TEMPERATURE = TEMPERATURE.narrowed(0.05, 20.0)
PAGE_TEMPERATURE_STEP = 0.05
# A window on a slider: from one token back to 32, past which it looks like the causal mask on most texts.
PAGE_WINDOW = WINDOW.narrowed(1, 32)


# Past the attention layer (attention/analyses/logit_lens.py, attention/experiments/generation.py).
LENS_TOP_K = IntRange(1, 50)  # tokens read at each layer and position: a table, not the vocabulary
PAGE_LENS_TOP_K = LENS_TOP_K.narrowed(1, 10)
# Greedy decoding's new tokens: one forward step each; the text and them must fit the model's positions besides
MAX_NEW_TOKENS = IntRange(1, 256)
PAGE_MAX_NEW_TOKENS = MAX_NEW_TOKENS.narrowed(1, 32)  # a few seconds of the shared CPU on SmolLM2-135M
# StreamingLLM's cache: the first tokens kept (0 evicts the first token too) and the last ones beside them
STREAMING_SINKS = IntRange(0, 16)
STREAMING_WINDOW = IntRange(1, 512)  # no longer than a text the core reads
PAGE_STREAMING_SINKS = STREAMING_SINKS.narrowed(0, 4)
PAGE_STREAMING_WINDOW = STREAMING_WINDOW.narrowed(1, 32)

# The induction lab's (attention/labs/induction.py): the core's, then the page's inside them.
INDUCTION_VOCAB = IntRange(2, 4_096)  # random tokens 0 to V − 1
INDUCTION_TOKENS = IntRange(4, 512)  # T, a sequence's length: the position embeddings' count
INDUCTION_PERIOD = IntRange(1, INDUCTION_TOKENS.high - 1)  # and shorter than the sequence: config.validate
INDUCTION_HEADS = IntRange(1, 16)
INDUCTION_STEPS = IntRange(1, 20_000)
INDUCTION_LEARNING_RATE = RealRange(1e-5, 1.0)
# On the page, for its 24-token sequences: a period of 2 to 12 repeats at least twice in them, and the probe's
# 12 tokens repeated once (head_scores.py) is of a period the models have seen. 4 tokens and more, so that a
# period's tokens are not all alike; up to 64 (more is no harder once a copy is learned). Up to 8 heads a layer
# and 2,000 steps: both models within a couple of minutes on a shared 2-core server, at most.
PAGE_INDUCTION_TOKENS = 24
PAGE_INDUCTION_PERIOD = INDUCTION_PERIOD.narrowed(2, PAGE_INDUCTION_TOKENS // 2)
PAGE_INDUCTION_VOCAB = INDUCTION_VOCAB.narrowed(4, 64)
PAGE_INDUCTION_HEADS = INDUCTION_HEADS.narrowed(1, 8)
PAGE_INDUCTION_STEPS = INDUCTION_STEPS.narrowed(100, 2_000)
PAGE_INDUCTION_STEPS_STEP = 100  # the steps slider moves by this many

# The counting lab's window (attention/labs/counting.py): the core's, then the page's, whose every size the lab's chart
# holds (a window that still draws legibly) and a link may ask for (win_size=).
WIN_SIZE_RANGE = IntRange(2, 24)
PAGE_WIN_SIZE = WIN_SIZE_RANGE.narrowed(2, 20)
