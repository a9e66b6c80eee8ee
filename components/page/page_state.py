"""The page's state as plain values, read from (and written back to) the URL's query parameters.

A link holds every control, so a teacher can hand out one exact view. Whatever a
URL holds is checked here: a malformed or out-of-range value falls back to a valid
one and yields a notice that says what happened. No Streamlit in this module.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attention.labs.induction_config import InductionConfig
from attention.models.model_list import BUNDLED_MODEL
from attention.stages.limits import (
    PAGE_INDUCTION_HEADS,
    PAGE_INDUCTION_PERIOD,
    PAGE_INDUCTION_STEPS,
    PAGE_INDUCTION_STEPS_STEP,
    PAGE_INDUCTION_VOCAB,
    PAGE_MAX_NEW_TOKENS,
    PAGE_SEED,
    PAGE_STREAMING_SINKS,
    PAGE_STREAMING_WINDOW,
    PAGE_TEMPERATURE,
    PAGE_WIN_SIZE,
    PAGE_WINDOW,
    IntRange,
)
from attention.stages.mask_kinds import MASKS
from attention.stages.settings import SCALINGS, SOURCE_LABELS, SOURCES, ModelShape, TraceSettings
from attention.text.segments import PAIR_FILTERS
from components.charts.aggregates import AGGREGATES
from components.page.lesson_steps import STEP_TITLES
from components.page.link_flags import flag
from components.page.view_list import VIEW_NAMES

# The model a page opens with when its link names none (one the page offers; else the bundled one).
DEFAULT_MODEL_ENV = "ATTENTION_ANATOMY_DEFAULT_MODEL"
MAX_TEXT_CHARS = 10_000  # about 2,000 words: far beyond the 512 or 1,024 tokens a model reads
DEFAULT_TEXT = "time flies like an arrow"
# How far a head's colours reach: its own largest weight, its layer's largest, or 1 (charts/colour_ranges.head_domains).
# Each choice's name in a link, its label on the control, and what a caption says the colours run to.
# The first two never end below 4/K (colour_ranges.UNIFORM_TIMES): an even spread is drawn pale, not as a dark square.
EVEN_SPREAD = ", or 4/K if that is larger (K keys: 4 times a uniform row's weight, so that an even spread is pale)"
WEIGHT_SCALES = {"head": ("each head's own max", "each head's own largest weight" + EVEN_SPREAD),
                 "layer": ("the layer's max", "the largest weight of any head of the layer" + EVEN_SPREAD),
                 "one": ("0 to 1", "1, the largest a weight can be")}
LESSON_STEPS = len(STEP_TITLES)
# What the head atlas measures its heads over: each choice's name in a link (atlas=), and its label.
ATLASES = {"corpus": "the corpus", "text": "this text"}
INDUCTION = InductionConfig()  # the induction lab's defaults, which its controls start from


def default_model() -> str:
    """The deployer's choice of the model a page opens with, else the bundled one."""
    return os.environ.get(DEFAULT_MODEL_ENV, "").strip() or BUNDLED_MODEL


@dataclass(frozen=True)
class PageState:
    """Every control on the page. layer and head count from 0, as transformers does."""

    text: str = DEFAULT_TEXT
    text_b: str = ""
    model: str = dataclasses.field(default_factory=default_model)  # a link without model= opens this one
    source: str = "bert"
    layer: int = 0
    head: int = 0
    head_dim: int = 32  # used by the random source only
    scaling: str = "sqrt"
    temperature: float = 1.0
    mask: str = "model"  # which keys a query may look at: the model's own mask, or a what-if (attention.stages.masks)
    window: int = 4  # how many tokens back a query sees, besides itself, under mask="window"
    seed: int = 0
    view: str = "head"
    step: int = 1  # lesson step, 1 to LESSON_STEPS
    query: int = 1  # the neuron view's query token (0 is [CLS])
    pair: str = "all"  # which block of a sentence pair's weights to show
    hide_special: bool = False  # drop the sink tokens ([CLS] and [SEP]; GPT-2's first) and renormalise the rest
    value_norm: bool = False  # the weights times ‖f(x_j)‖, rows rescaled to sum to 1 (AttentionViz)
    words: bool = False  # a word's pieces merged into one row and column of the weights (attention/text/words.py)
    aggregate: str = "mean"  # how the all-heads view sums up a layer
    grid_tokens: bool = False  # the all-heads view's small maps with the tokens written beside them
    weight_scale: str = "head"  # the weights' colours: each head to its own max, to its layer's, or 0 to 1
    present: bool = False  # presentation mode: chart text legible from the back of a room, charts as large as fit
    # The induction lab's own (its seed is seed=): the range of periods, the vocabulary, heads a layer, steps.
    periods: tuple[int, int] = (INDUCTION.period_low, INDUCTION.period_high)  # periods=4-12 in a link
    vocab: int = INDUCTION.vocab_size
    heads: int = INDUCTION.heads
    steps: int = INDUCTION.steps
    atlas: str = "corpus"  # the head atlas over the bundled corpus, or over the text alone
    # The counting lab's window size, picked on its chart (attention.labs.counting.CountingConfig's default; the lab's
    # other settings are its own controls', not the link's).
    win_size: int = 10
    # Generation with a KV cache: the new tokens (a step through every layer each, a few seconds on SmolLM2 at 32),
    # and StreamingLLM's cache of first tokens kept (the paper's 4) beside the last `recent`.
    new_tokens: int = 8
    sinks: int = 4
    recent: int = 4


PARAMS = tuple(field.name for field in dataclasses.fields(PageState))


def from_query(query: Mapping[str, Sequence[str]], models: Sequence[str]) -> tuple[PageState, list[str]]:
    """Read a PageState from query parameters (each a list of values); return it and the notices.

    Ranges that depend on the model (layer, head, head_dim) are checked by fit_to_model, the query token's (it
    depends on the text) by fit_to_text.
    """
    notices: list[str] = []
    values: dict[str, object] = {}
    for name in PARAMS:
        given = list(query.get(name, ()))
        if not given:
            continue
        if len(given) > 1:
            notices.append(f"The link gives {name} {len(given)} times; the last one is used.")
        raw = given[-1]
        try:
            values[name] = _PARSERS[name](raw, models)
        except ValueError as reason:
            default = getattr(PageState(), name)
            shown = _format(default) if isinstance(default, tuple) else repr(default)
            notices.append(f"The link's {name}={shorten(raw)} was ignored: {reason}. Showing {name}={shown}.")
    state = PageState(**values)
    if state.model not in models:  # only a deployer's default can be missing: links are checked above
        notices.append(f"This server's default model {shorten(state.model)} ({DEFAULT_MODEL_ENV}) is not one it "
                       f"offers; showing the bundled model {BUNDLED_MODEL!r}.")
        state = dataclasses.replace(state, model=BUNDLED_MODEL)
    return state, notices


def fit_to_model(state: PageState, shape: ModelShape) -> tuple[PageState, list[str]]:
    """Bring layer, head and head_dim inside what this model and source allow, saying what moved."""
    notices: list[str] = []

    def clamp(name: str, value: int, low: int, high: int, why: str) -> int:
        if low <= value <= high:
            return value
        fitted = min(max(value, low), high)
        notices.append(f"{name}={value} does not exist ({why}: {low} to {high}); showing {name}={fitted}.")
        return fitted

    layer = clamp("layer", state.layer, 0, shape.num_layers - 1, f"the model has {shape.num_layers} layers")
    head_dim = clamp("head_dim", state.head_dim, 1, shape.hidden_size, f"the hidden size is {shape.hidden_size}")
    num_heads = TraceSettings(source=state.source, head_dim=head_dim).num_heads(shape)
    head = clamp("head", state.head, 0, num_heads - 1,
                 f"the {SOURCE_LABELS[state.source]} source gives {num_heads} head{'' if num_heads == 1 else 's'}")
    return dataclasses.replace(state, layer=layer, head=head, head_dim=head_dim), notices


def fit_to_text(state: PageState, tokens: int) -> tuple[PageState, list[str]]:
    """Bring the query token inside a text of this many tokens: a position past its end (from a link, or left by
    a longer text) becomes the last token, saying so."""
    last = tokens - 1
    if state.query <= last:
        return state, []
    notice = f"query={state.query} does not exist (the text has {tokens} tokens: 0 to {last}); showing query={last}."
    return dataclasses.replace(state, query=last), [notice]


def to_query(state: PageState) -> dict[str, str]:
    """The parameters that differ from the defaults, as strings for the URL."""
    defaults = PageState()
    return {
        name: _format(getattr(state, name))
        for name in PARAMS
        if getattr(state, name) != getattr(defaults, name)
    }


def shorten(text: str, limit: int = 40) -> str:
    """A user-given value, cut short, as a Markdown code span: shown literally, never interpreted."""
    if not text:
        return "(empty)"
    text = text if len(text) <= limit else text[:limit] + "…"
    return "`" + "".join(" " if ch in "`\r\n" else ch for ch in text) + "`"


def _format(value: object) -> str:
    if isinstance(value, tuple):  # a range: periods=4-12
        return "-".join(str(end) for end in value)
    if isinstance(value, bool):
        return "1" if value else "0"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _text(raw: str, _models) -> str:
    if len(raw) > MAX_TEXT_CHARS:
        raise ValueError(f"longer than {MAX_TEXT_CHARS:,} characters")
    return raw


def _model(raw: str, models: Sequence[str]) -> str:
    if raw not in models:
        raise ValueError(f"not one of the models this page offers ({', '.join(models)})")
    return raw


# The parsers turn a link's text into a value and check it against the core's limits (attention.stages.limits);
# their reasons speak of "it", the value the notice has just quoted.
def _choice(valid: Sequence[str]):
    def parse(raw: str, _models) -> str:
        if raw not in valid:
            raise ValueError(f"it must be one of {', '.join(valid)}")
        return raw
    return parse


def _integer(valid: IntRange):
    def parse(raw: str, _models) -> int:
        try:
            value = int(raw.strip())
        except ValueError:
            raise ValueError("it is not a whole number") from None
        if value not in valid:
            raise ValueError(f"it must be {valid}")
        return value
    return parse


def _temperature(raw: str, _models) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise ValueError("it is not a number") from None
    if value not in PAGE_TEMPERATURE:
        raise ValueError(f"τ must be a number {PAGE_TEMPERATURE}")
    return value


def _multiple(valid: IntRange, step: int):
    def parse(raw: str, models) -> int:
        value = _integer(valid)(raw, models)
        if value % step:
            raise ValueError(f"it must be a multiple of {step} {valid}")
        return value
    return parse


def _periods(raw: str, models) -> tuple[int, int]:
    low, separator, high = raw.strip().partition("-")
    if not separator:
        raise ValueError("it must be two whole numbers with a dash between them, as 4-12")
    ends = tuple(_integer(PAGE_INDUCTION_PERIOD)(end, models) for end in (low, high))
    if ends[0] > ends[1]:
        raise ValueError("its first period must not be above its last")
    return ends


def _flag(raw: str, _models) -> bool:
    return flag(raw)


_PARSERS = {
    "text": _text,
    "text_b": _text,
    "model": _model,
    "source": _choice(SOURCES),
    "layer": _integer(IntRange(0)),  # their upper ends depend on the model: fit_to_model
    "head": _integer(IntRange(0)),
    "head_dim": _integer(IntRange(1)),
    "scaling": _choice(SCALINGS),
    "temperature": _temperature,
    "mask": _choice(MASKS),
    "window": _integer(PAGE_WINDOW),
    "seed": _integer(PAGE_SEED),
    "view": _choice(VIEW_NAMES),
    "step": _integer(IntRange(1, LESSON_STEPS)),
    "query": _integer(IntRange(0)),
    "pair": _choice(tuple(PAIR_FILTERS)),
    "hide_special": _flag,
    "value_norm": _flag,
    "words": _flag,
    "aggregate": _choice(AGGREGATES),
    "grid_tokens": _flag,
    "weight_scale": _choice(WEIGHT_SCALES),
    "present": _flag,
    "periods": _periods,
    "vocab": _integer(PAGE_INDUCTION_VOCAB),
    "heads": _integer(PAGE_INDUCTION_HEADS),
    "steps": _multiple(PAGE_INDUCTION_STEPS, PAGE_INDUCTION_STEPS_STEP),
    "atlas": _choice(tuple(ATLASES)),
    "win_size": _integer(PAGE_WIN_SIZE),
    "new_tokens": _integer(PAGE_MAX_NEW_TOKENS),
    "sinks": _integer(PAGE_STREAMING_SINKS),
    "recent": _integer(PAGE_STREAMING_WINDOW),
}
