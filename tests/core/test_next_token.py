"""Switching heads off in a GPT-2: its next-token guess against transformers' own GPT2LMHeadModel, on a tiny
GPT-2 built here (random weights, harness.checkpoints' byte-level BPE trained offline).

Its weights are drawn 25 times wider than GPT-2's initialisation (initializer_range 0.5, not 0.02): at 0.02 every
token of the vocabulary gets about 1/V and a head switched off moves no probability by more than the
float32 tolerance, so a test that compared them could not fail. At 0.5 the guesses are peaked and each head
moves them by 4 to 12 points.

The reference is a GPT2LMHeadModel loaded apart from the page's model; a head is switched off in it by a forward
pre-hook on c_proj (W_O) that zeroes the head's slice of the context, here in the test only. The core switches
heads off without hooks (attention/experiments/head_switch.py, the family's layer_with_heads_off).
Shapes: B batch, T tokens, C hidden size, nh heads, d head size, V vocabulary.
"""

from __future__ import annotations

import gc
import weakref
from contextlib import contextmanager

import numpy as np
import pytest
import torch

from attention.dissect.trace import build_trace
from attention.experiments.head_switch import drop_grid, head_ranking, layer_inputs, predict, run_model
from attention.models.families import GPT2
from attention.models.lm_heads import NoLanguageModelHead, load_language_model
from attention.models.loading import load_model
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.private_hooks import forward_hooks
from harness.checkpoints import gpt2_tokenizer, save_gpt2
from harness.reference import transformers_tokenizer

TEXT = "The cat sat on the"
TOLERANCE = 1e-5  # float32: the same numbers summed in another order
SPREAD = 0.5  # the weights' initializer_range: see above


def save_peaked_gpt2(folder, *, tie_word_embeddings: bool = True, seed: int = 0):
    """A tiny GPT-2 (2 layers, 4 heads of 8, 128 positions) whose guesses are peaked: weights drawn with SPREAD."""
    from transformers import GPT2Config

    tokenizer = gpt2_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=32, n_layer=2, n_head=4,
                        initializer_range=SPREAD, tie_word_embeddings=tie_word_embeddings,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    return save_gpt2(folder, config, tokenizer, seed=seed)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return save_peaked_gpt2(tmp_path_factory.mktemp("peaked-gpt2"))


@pytest.fixture(scope="module")
def loaded(checkpoint):
    return load_model(str(checkpoint))


@pytest.fixture(scope="module")
def language_model(loaded, checkpoint):
    return load_language_model(str(checkpoint), loaded)


@pytest.fixture(scope="module")
def reference(checkpoint):
    """transformers' own GPT2LMHeadModel of the same folder: the model and its tied LM head in one."""
    return _reference(checkpoint)


def _reference(folder):
    from transformers import GPT2LMHeadModel

    return GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def inputs(language_model):
    return transformers_tokenizer(language_model.model)(TEXT, return_tensors="pt")


@contextmanager
def heads_zeroed(reference, heads_off):
    """The reference with each (layer, head) of heads_off silenced: its context (B, T, d) set to 0 before c_proj."""
    size = reference.config.n_embd // reference.config.n_head  # d

    def zero(layer):
        def hook(_module, args):
            context = args[0].clone()  # (B, T, nh·d): every head's context side by side
            for at, head in heads_off:
                if at == layer:
                    context[..., head * size:(head + 1) * size] = 0.0
            return (context, *args[1:])
        return hook

    handles = [block.attn.c_proj.register_forward_pre_hook(zero(layer))
               for layer, block in enumerate(reference.transformer.h)]
    try:
        yield reference
    finally:
        for handle in handles:
            handle.remove()


def reference_next(reference, inputs, heads_off=()) -> np.ndarray:
    """(V,) softmax of the reference's logits at the last position, with heads_off zeroed."""
    with heads_zeroed(reference, heads_off), torch.inference_mode():
        logits = reference(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).logits  # (1, T, V)
    return torch.softmax(logits[0, -1], dim=-1).numpy()


def test_the_head_is_gpt2s_tied_one_and_keeps_nothing_of_the_model(language_model, loaded):
    assert language_model.head.objective == "next"
    assert language_model.head.decoder_weight is None, "tied: the word embeddings wte, looked up at each use"
    assert language_model.model is loaded, "one copy of the model's weights"
    assert not [value for value in vars(language_model.head).values() if isinstance(value, torch.Tensor)]


def test_with_every_head_on_the_logits_are_gpt2_lm_head_models(language_model, reference, inputs):
    run = run_model(language_model, inputs["input_ids"], torch.zeros_like(inputs["input_ids"]),
                    inputs["attention_mask"])
    with torch.inference_mode():
        theirs = reference(**inputs).logits.numpy()  # (1, T, V)
    assert run.logits.shape == theirs.shape
    np.testing.assert_allclose(run.logits, theirs, atol=TOLERANCE)


def test_with_every_head_on_the_next_token_is_gpt2_lm_head_models(language_model, reference, inputs):
    prediction = predict(language_model, TEXT)
    theirs = reference_next(reference, inputs)
    np.testing.assert_allclose(prediction.probabilities, theirs, atol=TOLERANCE)
    assert prediction.position == inputs["input_ids"].shape[1] - 1, "the guess is read after the last token"
    assert list(prediction.top_ids) == np.argsort(-theirs, kind="stable")[:5].tolist()


@pytest.mark.parametrize("heads_off", [((0, 0),), ((0, 3),), ((1, 1),), ((1, 2),), ((0, 1), (1, 3))],
                         ids=str)
def test_a_head_off_is_gpt2_lm_head_model_with_that_heads_context_zeroed(language_model, reference, inputs,
                                                                          heads_off):
    intact, theirs = reference_next(reference, inputs), reference_next(reference, inputs, heads_off)
    assert np.abs(theirs - intact).max() > 1000 * TOLERANCE, "the head carries something: the test can fail"
    ours = predict(language_model, TEXT, heads_off).probabilities
    np.testing.assert_allclose(ours, theirs, atol=TOLERANCE)


def test_a_head_off_changes_its_layer_exactly_as_the_trace_zeroes_it(language_model, loaded, inputs):
    types = torch.zeros_like(inputs["input_ids"])
    intact = run_model(language_model, inputs["input_ids"], types, inputs["attention_mask"])
    for layer, head in ((0, 2), (1, 0)):
        trace = build_trace(loaded, encode(loaded, TEXT),
                            TraceSettings(layer=layer, head=head, heads_off=(head,)))
        switched = run_model(language_model, inputs["input_ids"], types, inputs["attention_mask"], [(layer, head)])
        np.testing.assert_allclose(switched.attention_outputs[layer], trace["attention output"], atol=TOLERANCE)
        for earlier in range(layer + 1):  # the layer's input is untouched
            np.testing.assert_array_equal(switched.hidden_states[earlier], intact.hidden_states[earlier])


def test_the_layer_with_every_head_on_is_the_models_own_block_under_the_causal_mask(loaded):
    """Two texts of different lengths, padded: the causal mask and the padding's as GPT2Model makes them."""
    batch = transformers_tokenizer(loaded)(["The cat sat on the mat.", "A zebra ran"], return_tensors="pt",
                                           padding=True)
    real = batch["attention_mask"].bool()  # (B, T): padding queries are left out, as nothing reads them
    shape = loaded.shape
    with torch.inference_mode():
        hidden_states = loaded.model(**batch, output_hidden_states=True).hidden_states
        for layer in range(shape.num_layers - 1):  # the last hidden state has ln_f applied
            keep = torch.ones(2, shape.num_heads)  # (B, nh)
            _, output = GPT2.layer_with_heads_off(loaded.model, layer, hidden_states[layer],
                                                  batch["attention_mask"], keep)  # (B, T, C)
            np.testing.assert_allclose(output[real].numpy(), hidden_states[layer + 1][real].numpy(), atol=TOLERANCE)


def test_a_mask_in_a_gpt2_text_is_just_text(language_model):
    prediction = predict(language_model, "the capital of france is [MASK]")
    assert "".join(prediction.tokens).endswith("[MASK]")
    assert prediction.position == len(prediction.tokens) - 1
    with pytest.raises(ValueError, match="Type a text for the model to continue"):
        predict(language_model, "   ")


def test_the_tokens_and_guesses_read_as_the_page_shows_them(language_model):
    prediction = predict(language_model, TEXT)
    tokenizer = transformers_tokenizer(language_model.model)
    ids = tokenizer(TEXT)["input_ids"]
    assert prediction.tokens == GPT2.readable(tokenizer.convert_ids_to_tokens(ids))
    assert prediction.top_words == GPT2.readable(tokenizer.convert_ids_to_tokens(list(prediction.top_ids)))
    shown = "".join(prediction.tokens) + "".join(prediction.top_words)
    assert "Ġ" not in shown and "␣" in "".join(prediction.tokens), prediction.tokens


def test_the_ranking_switches_each_head_off_alone(language_model):
    intact, effects = head_ranking(language_model, TEXT)
    shape = language_model.shape
    assert intact.top_ids == predict(language_model, TEXT).top_ids
    assert sorted((e.layer, e.head) for e in effects) == [(layer, head) for layer in range(shape.num_layers)
                                                          for head in range(shape.num_heads)]
    assert [e.drop for e in effects] == sorted((e.drop for e in effects), reverse=True)
    top_id = intact.top_ids[0]
    for effect in effects:
        alone = predict(language_model, TEXT, [(effect.layer, effect.head)])
        assert effect.probability == pytest.approx(alone.probability_of(top_id), rel=1e-5)
        assert effect.top_word == alone.top_words[0]
    grid = drop_grid(effects, shape)
    assert grid[effects[0].layer, effects[0].head] == pytest.approx(100 * effects[0].drop, rel=1e-6)


def test_the_model_is_left_as_it_was(language_model):
    model = language_model.model.model
    before = {name: value.clone() for name, value in model.state_dict().items()}
    hooks = _hooks(model)  # transformers' own, if a forward pass with output_hidden_states installed them
    predict(language_model, TEXT, [(0, 1), (1, 3)])
    head_ranking(language_model, TEXT)
    assert _hooks(model) == hooks, "no hook added or taken away"
    for name, value in model.state_dict().items():
        assert torch.equal(value, before[name]), name
    assert not model.training


def _hooks(model) -> dict[str, tuple]:
    return {name: tuple(forward_hooks(module)) for name, module in model.named_modules()}


@pytest.fixture(scope="module")
def untied_checkpoint(tmp_path_factory):
    """A GPT-2 whose LM head is its own (tie_word_embeddings=False): lm_head.weight is in the checkpoint."""
    return save_peaked_gpt2(tmp_path_factory.mktemp("peaked-gpt2-untied"), tie_word_embeddings=False, seed=1)


def test_an_untied_head_of_its_own_predicts_as_its_checkpoint(untied_checkpoint):
    untied = load_language_model(str(untied_checkpoint))
    assert untied.head.decoder_weight is not None
    reference = _reference(untied_checkpoint)
    assert not torch.equal(reference.lm_head.weight, reference.transformer.wte.weight), "the head is not tied"
    inputs = transformers_tokenizer(untied.model)(TEXT, return_tensors="pt")
    np.testing.assert_allclose(predict(untied, TEXT).probabilities, reference_next(reference, inputs),
                               atol=TOLERANCE)
    np.testing.assert_allclose(predict(untied, TEXT, [(1, 2)]).probabilities,
                               reference_next(reference, inputs, [(1, 2)]), atol=TOLERANCE)


def test_an_untied_gpt2_saved_without_its_head_has_none(tmp_path, untied_checkpoint):
    from transformers import GPT2Model

    GPT2Model.from_pretrained(untied_checkpoint).save_pretrained(tmp_path)  # the model alone, lm_head.weight left out
    gpt2_tokenizer().save_pretrained(tmp_path)
    with pytest.raises(NoLanguageModelHead, match="no language-model head.*lm_head.weight"):
        load_language_model(str(tmp_path))


def test_dropping_the_language_model_frees_the_model_it_sat_on(checkpoint):
    """The head holds no reference to the model: once the model is let go, its weights are freed."""
    model = load_model(str(checkpoint))
    head = load_language_model(str(checkpoint), model).head
    let_go = weakref.ref(model.model)
    del model
    gc.collect()
    assert let_go() is None, "the head kept the model alive"
    assert load_language_model(str(checkpoint)).head.objective == head.objective


@pytest.mark.parametrize("heads_off", [(), [(1, 2)], [(0, 0), (1, 3)]])
def test_a_pass_from_the_kept_layer_inputs_guesses_the_next_token_as_the_whole_pass(language_model, heads_off):
    kept = layer_inputs(language_model, TEXT)
    whole = predict(language_model, TEXT, heads_off)
    resumed = predict(language_model, TEXT, heads_off, intact_inputs=kept)
    np.testing.assert_allclose(resumed.probabilities, whole.probabilities, rtol=1e-5, atol=1e-6)
    assert resumed.top_ids == whole.top_ids
