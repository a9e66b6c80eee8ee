"""The outline of a trace is the trace's steps without their tensors: the same names, stages, formulas and
shapes in the same order, for every source, head size, scaling, similarity, head switched off, layer,
batch and model. Written apart from the trace (attention/dissect/outline.py), so these tests are what keeps them one.

Shapes: B batch, T tokens, C hidden size, nh heads, d head size.
"""

from __future__ import annotations

import itertools

import pytest

from attention.dissect.outline import Outline, build_outline, outline_steps
from attention.dissect.trace import build_trace
from attention.stages.settings import SCALINGS, SIMILARITIES, TraceSettings
from attention.text.encoding import encode, encode_batch

SHORT = "time flies like an arrow"
PAIR = ("time flies like an arrow", "fruit flies like a banana")
LONG = "I am looking for a hot job and a warm flat near the river"
TEMPERATURES = (0.37, 2.5)


def listed(steps) -> list[tuple[str, str, str, tuple[int, ...]]]:
    """What the shapes panel reads of each step."""
    return [(step.stage, step.name, step.formula, tuple(step.shape)) for step in steps]


def sources(shape) -> list[dict]:
    """Every kind of projection the page offers, with random head sizes that divide C and that do not."""
    hidden = shape.hidden_size
    return [dict(source="bert"), dict(source="bert", head_dim=shape.head_size), dict(source="identity"),
            dict(source="random"), dict(source="random", head_dim=1), dict(source="random", head_dim=5),
            dict(source="random", head_dim=hidden // 2), dict(source="random", head_dim=hidden)]


def every_setting(shape, layers) -> list[TraceSettings]:
    """Each source with every scaling (two temperatures), similarity, layer given, the first and last head,
    and heads switched off or not."""
    chosen = []
    for kind, scaling, similarity, layer in itertools.product(sources(shape), SCALINGS, SIMILARITIES, layers):
        temperatures = TEMPERATURES if scaling == "temperature" else (1.0,)
        base = TraceSettings(layer=layer, scaling=scaling, similarity=similarity, **kind)
        last = base.num_heads(shape) - 1
        for temperature, head in itertools.product(temperatures, sorted({0, last})):
            for heads_off in ((), (last,), tuple(sorted({0, last}))):
                chosen.append(TraceSettings(layer=layer, head=head, scaling=scaling, temperature=temperature,
                                            similarity=similarity, heads_off=heads_off, seed=3, **kind))
    return chosen


def assert_outline_is_the_trace(loaded, encoding, settings) -> None:
    trace = build_trace(loaded, encoding, settings)
    outline = build_outline(loaded.shape, encoding, settings)
    assert listed(outline.steps) == listed(trace.steps), settings
    assert (outline.settings, outline.tokens, outline.num_heads, outline.head_size, outline.divisor,
            outline.dropped_tokens) == (trace.settings, trace.tokens, trace.num_heads, trace.head_size,
                                        trace.divisor, trace.dropped_tokens), settings


@pytest.mark.parametrize("texts", [[(SHORT, None)], [PAIR], [(SHORT, None), (LONG, None)], [PAIR, (LONG, None)]],
                         ids=["one text", "a sentence pair", "a padded batch", "a pair padded with a text"])
def test_the_outline_is_the_tiny_models_trace_without_its_tensors(tiny, texts):
    encoding = encode_batch(tiny, texts)
    settings = every_setting(tiny.shape, range(tiny.shape.num_layers))
    assert len(settings) > 500
    for each in settings:
        assert_outline_is_the_trace(tiny, encoding, each)


def test_the_outline_is_the_bundled_models_trace_without_its_tensors(bundled):
    encoding = encode(bundled, *PAIR)
    settings = every_setting(bundled.shape, (0, bundled.shape.num_layers - 1))
    assert len(settings) > 500
    for each in settings:
        assert_outline_is_the_trace(bundled, encoding, each)


def test_a_text_cut_at_the_models_limit_keeps_its_count_of_dropped_tokens(tiny):
    encoding = encode(tiny, " ".join(["word"] * 100))  # the tiny model reads 64 positions
    assert encoding.dropped_tokens[0] > 0
    assert_outline_is_the_trace(tiny, encoding, TraceSettings(layer=1, head=3))


def test_the_tokens_alone_make_the_same_outline(tiny):
    """The page's encoding keeps no hidden state (encode(..., layers=())): the outline needs none."""
    settings = TraceSettings(layer=1, head=2)
    tokens_only = encode(tiny, *PAIR, layers=())
    assert all(hidden is None for hidden in tokens_only.hidden_states)
    outline = build_outline(tiny.shape, tokens_only, settings)
    assert listed(outline.steps) == listed(build_trace(tiny, encode(tiny, *PAIR), settings).steps)
    assert outline.steps == outline_steps(tiny.shape, settings, *tokens_only.input_ids.shape)


def test_a_step_is_found_by_its_name(tiny):
    outline = build_outline(tiny.shape, encode(tiny, SHORT, layers=()),
                            TraceSettings(scaling="temperature", temperature=0.37))
    assert isinstance(outline, Outline)
    assert outline.formula("scaled") == "scores / τ = 0.37"
    assert outline.names[:3] == ("input_ids", "token_type_ids", "attention_mask")
    with pytest.raises(KeyError, match="weights"):
        outline.formula("no such step")


@pytest.mark.parametrize(("settings", "mention"), [
    (TraceSettings(layer=2), "0 to 1"), (TraceSettings(head=4), "0 to 3"), (TraceSettings(head_dim=16), "fixed at 8"),
    (TraceSettings(source="random", head_dim=33), "1 to 32"), (TraceSettings(scaling="log"), "scaling"),
])
def test_settings_the_trace_refuses_the_outline_refuses_alike(tiny, settings, mention):
    encoding = encode(tiny, SHORT)
    for build in (lambda: build_trace(tiny, encoding, settings), lambda: build_outline(tiny.shape, encoding, settings)):
        with pytest.raises(ValueError, match=mention):
            build()


@pytest.fixture(scope="module")
def tiny_llama_model(tmp_path_factory):
    """A tiny Llama: 4 query heads sharing 2 key/value heads, RoPE (harness/checkpoints.py)."""
    from attention.models.loading import load_model
    from harness.checkpoints import tiny_llama

    return load_model(str(tiny_llama(tmp_path_factory.mktemp("tiny-llama"))))


@pytest.mark.parametrize("texts", [[(SHORT, None)], [(SHORT, None), (LONG, None)]], ids=["one text", "a padded batch"])
def test_the_outline_is_a_llamas_trace_without_its_tensors(tiny_llama_model, texts):
    """RoPE and grouped-query attention add steps (q and k turned, K and V of n_kv heads repeated for the query
    heads): the outline has them too, with K and V fewer heads than Q where the shapes panel reads them."""
    encoding = encode_batch(tiny_llama_model, texts)
    settings = every_setting(tiny_llama_model.shape, range(tiny_llama_model.shape.num_layers))
    assert len(settings) > 500
    for each in settings:
        assert_outline_is_the_trace(tiny_llama_model, encoding, each)
    shapes = {step.name: step.shape for step in build_outline(tiny_llama_model.shape, encoding, TraceSettings()).steps}
    batch, tokens = encoding.input_ids.shape
    assert shapes["Q split"] == (batch, 4, tokens, 8)
    assert shapes["K split"] == shapes["V split"] == (batch, 2, tokens, 8)
    assert shapes["K repeated"] == shapes["Q rotated"] == (batch, 4, tokens, 8)
