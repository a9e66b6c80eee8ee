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
# The one-head view's stages: each one's name in a link (head_stage=masked), and its button's full label, which the
# page's state holds as the control does. Rotation is offered only where the head turns q and k by position (a
# Llama): the view falls back to the weights, with a notice, for a model without it.
HEAD_STAGES = {"weights": "Attention weights", "scores": "Raw scores Q·Kᵀ", "scaled": "Scaled scores",
               "masked": "Masked scores", "context": "Context vectors", "lines": "Weights as lines",
               "moved": "What moves α·‖f(x)‖", "rotation": "Rotation"}
_STAGE_LINK_NAMES = {label: name for name, label in HEAD_STAGES.items()}
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
    colour_blind: bool = False  # the charts' colours for colour-blind readers (components/charts/palettes.py)
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
    compare_special: bool = False  # the compare view's largest change counts the sink tokens too
    head_stage: str = HEAD_STAGES["weights"]  # the one-head view's stage, as its button's label (head_stage=masked)
    # The switch view's heads switched off, (layer, head) pairs sorted, each once: off=2:5,5:0 in a link. Which pairs
    # exist depends on the model: fit_heads_off.
    off: tuple[tuple[int, int], ...] = ()


PARAMS = tuple(field.name for field in dataclasses.fields(PageState))
# What a class's follower takes of the teacher's view: every field but these, each with why
# (tests/classroom/test_followed_fields.py holds the two lists together).
NOT_FOLLOWED = {
    "present": "presentation mode sizes the page for the projector the teacher's page is on, not for a student's "
               "screen (a phone's would show a sliver of a chart)",
    "colour_blind": "the colours a reader can tell apart are that reader's own, not the teacher's",
}
FOLLOWED = tuple(name for name in PARAMS if name not in NOT_FOLLOWED)
# The page's input widgets whose value is no field of PageState, by key (or the key's stem, for keys made per step or
# per token), each with why the link leaves it out. Every other input widget's key is a field's name, bound to it by
# controls.bound_widget; tests/classroom/test_followed_fields.py finds every input widget of the page and holds it to
# one or the other.
UNLINKED_CONTROLS = {
    "preset": "a menu that fills the texts (text= and text_b= hold them), not a setting",
    "switch_sentence": "the switch view's own sentence, typed in the view; the link's text starts it",
    "lines_from": "a long text's window of the lines, moved by each reader to the tokens they read",
    "lens_source": "the logit lens's choice of the induction lab's models, which only this session trained",
    "lens_induction_layers": "the induction lab's models in the lens: this session's own",
    "lens_layer": "the lens's row read out in words, picked by each reader on the map above it",
    "generate_step": "a generation's step, scrubbed by each reader through steps the page has all computed",
    "generate_layer": "a generation step's layer, scrubbed by each reader",
    "tiled_query": "the block view's query row of the tiled softmax, a worked example each reader picks",
    "tiled_block": "the tiled softmax's keys per block, a worked example each reader picks",
    "rotary_pair": "the Rotation stage's pair of numbers, a worked example each reader picks",
    "rotary_directions": "the Rotation stage's circle drawn as directions only, each reader's to switch",
    "rotary_shift": "the Rotation stage's shift Δ, a worked example each reader picks",
    "rotary_query": "the Rotation stage's query token, starting at query=",
    "rotary_key": "the Rotation stage's key token, a worked example each reader picks",
    "lesson_word_": "(a stem, one a step) the lesson's word compared in two sentences, starting at the most telling",
    "table_": "(a stem, one a chart) a heatmap's numbers as a table, opened by each reader who reads them",
    # A class's question (components/classroom/questions.py) is the class's, kept in its store: its inputs are the
    # teacher's to ask it and each student's to answer it, never a setting of the page.
    "quiz_kind": "the kind of question the teacher is about to ask the class",
    "quiz_token": "the token the teacher's question is about",
    "quiz_prompt": "the teacher's own question, as typed",
    "quiz_choices": "the teacher's own question's choices, as typed",
    "quiz_vote_": "(a stem, one a round) a student's answer to the class's question, each student's own",
    # The counting lab trains in the session that asked (attention.labs.counting): its link holds the window size
    # alone (win_size=); its training's settings are each reader's.
    "count_vocab_size": "the counting lab's training setting, each reader's own",
    "count_head_size": "the counting lab's training setting, each reader's own",
    "count_scaling": "the counting lab's training setting, each reader's own",
    "count_temperature": "the counting lab's training setting, each reader's own",
    "count_learning_rate": "the counting lab's training setting, each reader's own",
    "count_steps": "the counting lab's training setting, each reader's own",
    "count_seed": "the counting lab's training setting, each reader's own",
}


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
            shown = repr(default) if name not in _FORMATS and not isinstance(default, tuple) else (
                _FORMATS.get(name, _format)(default) or "(none)")
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


def fit_heads_off(state: PageState, num_layers: int, num_heads: int) -> tuple[PageState, list[str]]:
    """Keep the heads switched off that this model has, saying which were dropped (a link's, or a model's left by
    another model with more layers or heads)."""
    kept = tuple(pair for pair in state.off if pair[0] < num_layers and pair[1] < num_heads)
    if kept == state.off:
        return state, []
    dropped = _format(tuple(pair for pair in state.off if pair not in kept))
    showing = f"showing off={_format(kept)}" if kept else "all heads are on"
    notice = (f"off={dropped}: no such head{'s' if len(state.off) - len(kept) > 1 else ''} (the model has "
              f"{num_layers} layers of {num_heads} heads); {showing}.")
    return dataclasses.replace(state, off=kept), [notice]


def to_query(state: PageState) -> dict[str, str]:
    """The parameters that differ from the defaults, as strings for the URL."""
    defaults = PageState()
    return {
        name: _FORMATS.get(name, _format)(getattr(state, name))
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
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):  # heads: off=2:5,5:0
        return ",".join(f"{layer}:{head}" for layer, head in value)
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


def _head_stage(raw: str, _models) -> str:
    if raw not in HEAD_STAGES:
        raise ValueError(f"it must be one of {', '.join(HEAD_STAGES)}")
    return HEAD_STAGES[raw]


def _heads_off(raw: str, _models) -> tuple[tuple[int, int], ...]:
    pairs = [pair.split(":") for pair in raw.strip().split(",") if pair]
    if not all(len(pair) == 2 and all(part.isascii() and part.isdigit() and len(part) <= 4 for part in pair)
               for pair in pairs):
        raise ValueError("it must be heads as layer:head, comma-separated, as 2:5,5:0")
    heads = tuple(sorted({(int(layer), int(head)) for layer, head in pairs}))
    if len(heads) != len(pairs):
        raise ValueError("it names a head twice")
    return heads


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
    "colour_blind": _flag,
    "periods": _periods,
    "vocab": _integer(PAGE_INDUCTION_VOCAB),
    "heads": _integer(PAGE_INDUCTION_HEADS),
    "steps": _multiple(PAGE_INDUCTION_STEPS, PAGE_INDUCTION_STEPS_STEP),
    "atlas": _choice(tuple(ATLASES)),
    "win_size": _integer(PAGE_WIN_SIZE),
    "new_tokens": _integer(PAGE_MAX_NEW_TOKENS),
    "sinks": _integer(PAGE_STREAMING_SINKS),
    "recent": _integer(PAGE_STREAMING_WINDOW),
    "compare_special": _flag,
    "head_stage": _head_stage,
    "off": _heads_off,
}
# Fields whose link spells them otherwise than _format does.
_FORMATS = {"head_stage": lambda label: _STAGE_LINK_NAMES[label]}
