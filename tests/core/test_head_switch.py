"""Switching heads off, against transformers and against the trace, on a tiny BERT with an MLM head saved here."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from attention.dissect.trace import build_trace
from attention.experiments.head_switch import (
    drop_grid,
    head_ranking,
    layer_inputs,
    normalise_heads_off,
    predict,
    run_model,
)
from attention.models.lm_heads import NoLanguageModelHead, load_language_model
from attention.models.loading import ModelLoadError, load_model
from attention.models.model_list import BUNDLED_MODEL
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.private_hooks import forward_hooks
from harness.reference import transformers_tokenizer
from tests.conftest import save_tiny_bert

SENTENCE = "the capital of france is [MASK] ."
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny BertForMaskedLM (2 layers, 4 heads, C = 32) saved like a real checkpoint."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-mlm"), with_mlm_head=True)


@pytest.fixture(scope="module")
def masked(checkpoint):
    return load_language_model(str(checkpoint))


@pytest.fixture(scope="module")
def reference(checkpoint):
    """transformers' own BertForMaskedLM of the same checkpoint, encoder and head in one model."""
    return _reference(checkpoint)


def _reference(checkpoint):
    from transformers import BertForMaskedLM

    return BertForMaskedLM.from_pretrained(checkpoint, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def inputs(masked):
    return transformers_tokenizer(masked.model)(SENTENCE, return_tensors="pt")


def _own_logits(reference, inputs) -> np.ndarray:
    with torch.inference_mode():
        return reference(**inputs).logits.numpy()  # (1, T, V): transformers' BertForMaskedLM


def test_with_every_head_on_the_logits_are_transformers_own(masked, reference, inputs):
    run = run_model(masked, inputs["input_ids"], inputs["token_type_ids"], inputs["attention_mask"])
    assert np.abs(run.logits - _own_logits(reference, inputs)).max() <= TOLERANCE
    assert len(run.hidden_states) == 3 and len(run.attention_outputs) == 2


def test_with_every_head_on_the_top_five_are_transformers_own(masked, reference, inputs):
    prediction = predict(masked, SENTENCE)
    mask_index = prediction.tokens.index("[MASK]")
    assert prediction.position == mask_index
    probabilities = torch.softmax(torch.from_numpy(_own_logits(reference, inputs)[0, mask_index]), dim=-1)
    top = torch.topk(probabilities, 5)
    assert list(prediction.top_ids) == top.indices.tolist()
    np.testing.assert_allclose(prediction.top_probabilities, top.values.numpy(), rtol=1e-5)
    words = transformers_tokenizer(masked.model).convert_ids_to_tokens(top.indices.tolist())
    assert prediction.top_words == tuple(words)
    np.testing.assert_allclose(prediction.probabilities.sum(), 1.0, rtol=1e-5)


@pytest.mark.parametrize("layer", [0, 1])
@pytest.mark.parametrize("head", [0, 3])
def test_a_head_off_changes_its_layer_exactly_as_the_trace_zeroes_it(checkpoint, masked, inputs, layer, head):
    encoder_only = load_model(str(checkpoint))  # BertModel from the same weights, as the rest of the page loads it
    encoding = encode(encoder_only, SENTENCE)
    trace = build_trace(encoder_only, encoding, TraceSettings(layer=layer, head=head, heads_off=(head,)))
    intact = run_model(masked, inputs["input_ids"], inputs["token_type_ids"], inputs["attention_mask"])
    switched = run_model(masked, inputs["input_ids"], inputs["token_type_ids"], inputs["attention_mask"],
                           [(layer, head)])
    assert np.abs(switched.attention_outputs[layer] - trace["attention output"]).max() <= TOLERANCE
    for earlier in range(layer + 1):  # the layer's input is untouched
        np.testing.assert_array_equal(switched.hidden_states[earlier], intact.hidden_states[earlier])
    assert np.abs(switched.attention_outputs[layer] - intact.attention_outputs[layer]).max() > 1e-4
    assert np.abs(switched.logits - intact.logits).max() > 0


def test_several_heads_off_match_the_trace_too(checkpoint, masked, inputs):
    encoder_only = load_model(str(checkpoint))
    trace = build_trace(encoder_only, encode(encoder_only, SENTENCE), TraceSettings(layer=0, heads_off=(1, 2)))
    run = run_model(masked, inputs["input_ids"], inputs["token_type_ids"], inputs["attention_mask"],
                      [(0, 2), (0, 1)])
    assert run.heads_off == ((0, 1), (0, 2))
    assert np.abs(run.attention_outputs[0] - trace["attention output"]).max() <= TOLERANCE


def test_the_model_is_left_as_it_was(masked):
    modules = (masked.model.model, masked.head.transform)
    tensors = {f"{i}.{name}": value for i, module in enumerate(modules) for name, value in module.state_dict().items()}
    tensors["bias"] = masked.head.bias
    before = {name: value.clone() for name, value in tensors.items()}
    predict(masked, SENTENCE, [(0, 1), (1, 3)])
    head_ranking(masked, SENTENCE)
    assert all(not forward_hooks(m) for module in modules for m in module.modules())
    for name, value in tensors.items():
        assert torch.equal(value, before[name]), name
    assert not any(module.training for module in modules)


def test_two_threads_with_different_heads_off_get_what_each_gets_alone(masked):
    choices = [((0, 1),), ((1, 2), (1, 3))]
    alone = [predict(masked, SENTENCE, off).probabilities for off in choices]
    results: dict[int, list[np.ndarray]] = {0: [], 1: []}
    start = threading.Barrier(2)

    def run(i: int) -> None:
        start.wait()
        for _ in range(25):
            results[i].append(predict(masked, SENTENCE, choices[i]).probabilities)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not np.array_equal(alone[0], alone[1])
    for i in range(2):
        assert len(results[i]) == 25
        for probabilities in results[i]:
            np.testing.assert_array_equal(probabilities, alone[i])


def test_the_ranking_switches_each_head_off_alone(masked):
    intact, effects = head_ranking(masked, SENTENCE)
    assert intact.top_ids == predict(masked, SENTENCE).top_ids
    assert sorted((e.layer, e.head) for e in effects) == [(layer, head) for layer in range(2) for head in range(4)]
    drops = [e.drop for e in effects]
    assert drops == sorted(drops, reverse=True)
    top_id = intact.top_ids[0]
    for effect in effects:
        alone = predict(masked, SENTENCE, [(effect.layer, effect.head)])
        assert effect.probability == pytest.approx(alone.probability_of(top_id), rel=1e-5)
        assert effect.drop == pytest.approx(intact.top_probabilities[0] - alone.probability_of(top_id), abs=1e-9)
        assert effect.top_word == alone.top_words[0]


def test_the_ranking_reads_the_kept_layer_inputs_the_toggles_use(masked):
    """The page makes the sentence's intact pass once, for its toggles and its ranking alike."""
    kept = layer_inputs(masked, SENTENCE)
    (intact, effects), (own_intact, own_effects) = head_ranking(masked, SENTENCE, kept), head_ranking(masked, SENTENCE)
    assert effects == own_effects
    np.testing.assert_array_equal(intact.probabilities, own_intact.probabilities)
    _, shifted = head_ranking(masked, SENTENCE, tuple(inputs + 0.5 for inputs in kept))
    assert shifted != own_effects, "they are read"


@pytest.mark.parametrize("heads_off", [(), [(0, 1)], [(1, 2)], [(1, 0), (1, 3)], [(0, 3), (1, 1)]])
def test_a_pass_from_the_kept_layer_inputs_guesses_as_the_whole_pass(masked, heads_off):
    kept = layer_inputs(masked, SENTENCE)
    whole, resumed = predict(masked, SENTENCE, heads_off), predict(masked, SENTENCE, heads_off, intact_inputs=kept)
    np.testing.assert_allclose(resumed.probabilities, whole.probabilities, rtol=1e-5, atol=1e-6)
    assert resumed.top_ids == whole.top_ids and resumed.heads_off == whole.heads_off


def test_the_kept_layer_inputs_are_the_intact_models_hidden_states(masked, inputs):
    run = run_model(masked, inputs["input_ids"], inputs["token_type_ids"], inputs["attention_mask"])
    kept = layer_inputs(masked, SENTENCE)
    assert len(kept) == len(run.hidden_states) == 3
    for mine, theirs in zip(kept, run.hidden_states, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_the_drop_grid_puts_each_heads_drop_at_its_layer_and_head_in_points(masked):
    _, effects = head_ranking(masked, SENTENCE)
    grid = drop_grid(effects, masked.shape)
    assert grid.shape == (2, 4)
    for effect in effects:
        assert grid[effect.layer, effect.head] == pytest.approx(100 * effect.drop, rel=1e-6)


def test_the_head_on_the_loaded_encoder_predicts_as_the_whole_checkpoint(checkpoint, masked, reference, inputs):
    encoder = load_model(str(checkpoint))
    shared = load_language_model(str(checkpoint), encoder)
    assert shared.model is encoder, "one copy of the encoder's weights"
    run = run_model(shared, inputs["input_ids"], inputs["token_type_ids"], inputs["attention_mask"])
    assert np.abs(run.logits - _own_logits(reference, inputs)).max() <= TOLERANCE
    assert predict(shared, SENTENCE).top_ids == predict(masked, SENTENCE).top_ids


def test_the_head_keeps_nothing_of_the_encoder(masked):
    """Whoever keeps the head (the page's cache) keeps no part of an encoder: the tied decoder, the word
    embeddings, is looked up on the encoder the head is put on, at each use."""
    assert masked.head.decoder_weight is None, "BERT's decoder is its word embeddings"
    encoder_storage = {p.untyped_storage().data_ptr() for p in masked.model.model.parameters()}
    head_tensors = [*masked.head.transform.parameters(), masked.head.bias]
    assert not {t.untyped_storage().data_ptr() for t in head_tensors} & encoder_storage


def test_a_head_with_a_decoder_of_its_own_predicts_as_its_checkpoint(tmp_path, inputs):
    checkpoint = save_tiny_bert(tmp_path / "untied", with_mlm_head=True, tie_word_embeddings=False)
    untied = load_language_model(str(checkpoint))
    assert untied.head.decoder_weight is not None
    run = run_model(untied, inputs["input_ids"], inputs["token_type_ids"], inputs["attention_mask"])
    assert np.abs(run.logits - _own_logits(_reference(checkpoint), inputs)).max() <= TOLERANCE


def test_an_encoder_without_a_head_in_its_weights_is_refused_on_the_shared_path_too(tiny_checkpoint):
    with pytest.raises(NoLanguageModelHead, match="no masked-language-model head"):
        load_language_model(str(tiny_checkpoint), load_model(str(tiny_checkpoint)))
    with pytest.raises(NoLanguageModelHead, match="no masked-language-model head"):
        load_language_model(BUNDLED_MODEL, load_model())


def test_the_bundled_model_has_no_mlm_head_and_says_what_to_do():
    with pytest.raises(NoLanguageModelHead) as caught:
        load_language_model(BUNDLED_MODEL)
    message = str(caught.value)
    assert "no masked-language-model head" in message
    assert "bert-base-uncased" in message and "local checkpoint" in message
    assert isinstance(caught.value, ModelLoadError)


def test_an_encoder_only_checkpoint_is_refused_the_same_way(tiny_checkpoint):
    with pytest.raises(NoLanguageModelHead, match="no masked-language-model head"):
        load_language_model(str(tiny_checkpoint))


def test_names_outside_the_allow_list_are_refused(tmp_path):
    with pytest.raises(ModelLoadError, match="Unknown model"):
        load_language_model("someone/bert-with-a-surprise")
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_language_model(str(tmp_path))


@pytest.mark.parametrize(("sentence", "message"), [
    ("the capital of france is paris .", "exactly one \\[MASK\\].*it has none"),
    ("[MASK] is the capital of [MASK] .", "it has 2"),
    ("   ", "Type a sentence"),
])
def test_a_sentence_needs_exactly_one_mask(masked, sentence, message):
    with pytest.raises(ValueError, match=message):
        predict(masked, sentence)


@pytest.mark.parametrize("heads_off", [[(2, 0)], [(0, 4)], [(0, -1)], [(0,)], [("0", 1)], [(True, 1)]])
def test_heads_that_do_not_exist_are_refused(masked, heads_off):
    with pytest.raises(ValueError, match="heads_off|does not exist"):
        normalise_heads_off(heads_off, masked.shape)
