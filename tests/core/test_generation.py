"""Greedy generation with a key/value cache (attention/experiments/generation.py, kv_cache.py) against transformers:
the tokens of generate(do_sample=False), and each step's one query row against the last row of the whole text
recomputed (output_attentions, eager), on a tiny GPT-2 (multi-head), a tiny Llama (4 query heads sharing 2) and a
tiny Llama with one key/value head (multi-query). Then StreamingLLM's cache: with nothing evicted it is the plain
cache; with a window it keeps the first tokens and the last ones, and evicting the first changes the rows.

Shapes: S cached tokens, nh query heads, n_kv key/value heads, d head size, L layers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.experiments.generation import (
    GenerationSettings,
    StreamingSettings,
    generate,
    streaming_what_if,
)
from attention.models.lm_heads import load_language_model
from attention.stages.kv_heads import cache_bytes
from harness.checkpoints import tiny_gpt2, tiny_llama
from tests.conftest import save_tiny_bert

PROMPT = "The cat sat on the"
LONGER = "The cat sat on the mat, and the dog watched it."
ROW_TOLERANCE = dict(rtol=1e-5, atol=1e-6)  # float32: the same softmax from sums in another order
MODELS = {"gpt2": ("GPT2LMHeadModel", tiny_gpt2, {}), "llama": ("LlamaForCausalLM", tiny_llama, {}),
          "mqa": ("LlamaForCausalLM", tiny_llama, {"num_key_value_heads": 1})}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return {name: make(tmp_path_factory.mktemp(name), **options) for name, (_, make, options) in MODELS.items()}


@pytest.fixture(scope="module", params=list(MODELS))
def decoder(request, checkpoints):
    return request.param, load_language_model(str(checkpoints[request.param]))


def test_the_tokens_are_transformers_greedy_generate(decoder, checkpoints):
    import transformers

    name, model = decoder
    generation = generate(model, PROMPT, GenerationSettings(max_new_tokens=12))
    reference = getattr(transformers, MODELS[name][0]).from_pretrained(
        checkpoints[name], attn_implementation="eager").eval()
    ids = torch.tensor([generation.prompt_ids])
    expected = reference.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=12, do_sample=False,
                                  pad_token_id=reference.config.eos_token_id)
    assert generation.new_ids == tuple(expected[0, ids.shape[1]:].tolist())
    assert len(set(generation.new_ids)) > 1  # a guess that never changes could not tell a wrong step


def test_each_steps_row_is_the_last_row_of_the_whole_text_recomputed(decoder):
    name, model = decoder
    generation = generate(model, PROMPT, GenerationSettings(max_new_tokens=8, stop_at_end=False))
    shape = model.shape
    every_id = [*generation.prompt_ids, *generation.new_ids]
    for index, step in enumerate(generation.steps):
        tokens = step.position + 1
        assert step.cache_positions == tuple(range(tokens))  # K and V one row longer each step
        assert step.weights.shape == (shape.num_layers, shape.num_heads, tokens)
        assert step.queries.shape == (shape.num_layers, shape.num_heads, shape.head_size)  # one row: Q not cached
        assert step.cache_bytes == cache_bytes(shape.num_layers, shape.kv_heads, tokens, shape.head_size)
        assert step.position == len(generation.prompt_ids) - 1 + index
        with torch.inference_mode():
            attentions = model.model.model(input_ids=torch.tensor([every_id[:tokens]]),
                                           output_attentions=True).attentions  # L x (1, nh, T, T)
        for layer, weights in enumerate(attentions):
            np.testing.assert_allclose(step.weights[layer], weights[0, :, -1].numpy(), **ROW_TOLERANCE)
    assert generation.keys.shape == (shape.num_layers, shape.kv_heads, len(every_id) - 1, shape.head_size)
    assert generation.values.shape == generation.keys.shape


def test_a_streaming_cache_that_evicts_nothing_is_the_plain_cache(decoder):
    name, model = decoder
    settings = GenerationSettings(max_new_tokens=6, stop_at_end=False)
    plain = generate(model, PROMPT, settings)
    streaming = generate(model, PROMPT, settings, StreamingSettings(sinks=4, window=64))
    assert streaming.new_ids == plain.new_ids
    for a, b in zip(streaming.steps, plain.steps, strict=True):
        assert a.cache_positions == b.cache_positions
        np.testing.assert_allclose(a.weights, b.weights, **ROW_TOLERANCE)


def test_evicting_keeps_the_first_and_the_last_tokens(decoder):
    name, model = decoder
    window = StreamingSettings(sinks=2, window=4)
    what_if = streaming_what_if(model, LONGER, window, GenerationSettings(max_new_tokens=5, stop_at_end=False))
    shape = model.shape
    for kept, evicted in zip(what_if.kept.steps, what_if.evicted.steps, strict=True):
        last = kept.position
        assert kept.cache_positions == (0, 1, *range(last - 3, last + 1))  # sinks, then the window
        assert evicted.cache_positions == tuple(range(last - 5, last + 1))  # the same size, the first gone
        assert kept.weights.shape == evicted.weights.shape == (shape.num_layers, shape.num_heads, 6)
        assert kept.cache_bytes == cache_bytes(shape.num_layers, shape.kv_heads, 6, shape.head_size)
        assert not np.allclose(kept.weights, evicted.weights, atol=1e-3)
    np.testing.assert_allclose(what_if.sink_weight, np.stack([step.weights[:, :, :2].sum(-1)
                                                              for step in what_if.kept.steps]))
    assert what_if.kept.keys.shape[2] == 6


def test_bad_settings_name_the_valid_range(checkpoints, tmp_path):
    model = load_language_model(str(checkpoints["gpt2"]))
    with pytest.raises(ValueError, match="from 1 to 256"):
        generate(model, PROMPT, GenerationSettings(max_new_tokens=0))
    with pytest.raises(ValueError, match="from 1 to 123"):  # 128 positions, 5 of them the text's
        generate(model, PROMPT, GenerationSettings(max_new_tokens=200))
    with pytest.raises(ValueError, match="from 0 to 16"):
        generate(model, PROMPT, streaming=StreamingSettings(sinks=17))
    with pytest.raises(ValueError, match="from 1 to 512"):
        streaming_what_if(model, PROMPT, StreamingSettings(window=0))
    bert = load_language_model(str(save_tiny_bert(tmp_path / "mlm", with_mlm_head=True)))
    with pytest.raises(ValueError, match="only a decoder"):
        generate(bert, "The cat sat on the [MASK].")


def test_streaming_turns_the_cached_keys_by_their_place_in_the_cache(checkpoints):
    """After eviction a Llama's cached keys are turned by positions 0 … S − 1 (StreamingLLM re-assigns them), not
    by their positions in the text: the last step's rows are its query against keys so turned by transformers'
    own rotary embedding."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    model = load_language_model(str(checkpoints["llama"]))
    generation = generate(model, LONGER, GenerationSettings(max_new_tokens=3, stop_at_end=False),
                          StreamingSettings(sinks=1, window=3))
    step, shape = generation.steps[-1], model.shape
    assert step.cache_positions[1] > 1  # tokens were evicted: places in the cache differ from places in the text
    keys = torch.from_numpy(generation.keys)  # (L, n_kv, S, d), as cached: before the turn
    places = torch.arange(keys.shape[2])[None, :]  # (1, S)
    with torch.inference_mode():
        cos, sin = model.model.model.rotary_emb(keys, places)  # (1, S, d) each
        turned, _ = apply_rotary_pos_emb(keys, keys, cos, sin)  # (L, n_kv, S, d)
    shared = turned.repeat_interleave(shape.num_heads // shape.kv_heads, dim=1)  # (L, nh, S, d)
    scores = torch.einsum("lhd,lhsd->lhs", torch.from_numpy(step.queries), shared) / shape.head_size ** 0.5
    np.testing.assert_allclose(scores.softmax(-1).numpy(), step.weights, **ROW_TOLERANCE)


def test_the_streaming_cache_is_a_forward_pass_with_the_evicted_keys_masked(checkpoints):
    """On GPT-2, whose positions are added to its input (nothing for the cache to re-assign), StreamingLLM's cache is
    transformers' own forward pass over the whole text under a mask that lets each token see the first `sinks`
    tokens and the last `window` up to itself: every step's row of weights, at every layer, and its next token."""
    from transformers import GPT2LMHeadModel

    model = load_language_model(str(checkpoints["gpt2"]))
    streaming = StreamingSettings(sinks=2, window=4)
    kept = streaming_what_if(model, LONGER, streaming, GenerationSettings(max_new_tokens=5, stop_at_end=False)).kept
    ids = torch.tensor([[*kept.prompt_ids, *kept.new_ids[:-1]]])  # (1, T): every token a step read
    tokens = ids.shape[1]
    query, key = torch.arange(tokens)[:, None], torch.arange(tokens)[None, :]  # (T, 1), (1, T)
    seen = (key <= query) & ((key < streaming.sinks) | (key > query - streaming.window))  # (T, T)
    mask = torch.zeros(1, 1, tokens, tokens).masked_fill(~seen, torch.finfo(torch.float32).min)  # (1, 1, T, T)
    reference = GPT2LMHeadModel.from_pretrained(checkpoints["gpt2"], attn_implementation="eager").eval()
    with torch.inference_mode():
        out = reference(input_ids=ids, attention_mask=mask, output_attentions=True)
    assert len(kept.steps) == 5 and kept.steps[0].cache_positions[2] > 2, "the window must have evicted keys"
    for step in kept.steps:
        theirs = torch.stack(out.attentions)[:, 0, :, step.position].numpy()  # (L, nh, T)
        np.testing.assert_allclose(theirs[:, :, list(step.cache_positions)], step.weights, **ROW_TOLERANCE)
        np.testing.assert_allclose(theirs.sum(-1), 1.0, rtol=1e-5)  # nothing outside the cache was seen
        assert step.next_id == int(out.logits[0, step.position].argmax())
