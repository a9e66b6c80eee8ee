"""Switching heads off in the bundled sentence-embedding model, against transformers' own BertModel with the
head's columns of W_o zeroed by hand and mean pooling written here, not through the page's code."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from attention.experiments.embedding_switch import (
    DEFAULT_SECOND,
    compare,
    head_ranking,
    layer_inputs,
    moved_grid,
    sentence_embeddings,
)
from harness.reference import transformers_model, transformers_tokenizer

TEXT = "time flies like an arrow"
TOLERANCE = 1e-5  # float32: the same numbers summed in another order


def reference_embeddings(bundled, sentences, heads_off=()) -> np.ndarray:
    """(B, C) embeddings from transformers' forward pass on a copy whose W_o ignores the heads switched off."""
    model = copy.deepcopy(transformers_model(bundled))
    size = model.config.hidden_size // model.config.num_attention_heads
    with torch.no_grad():
        for layer, head in heads_off:
            model.encoder.layer[layer].attention.output.dense.weight[:, head * size:(head + 1) * size] = 0.0
        inputs = transformers_tokenizer(bundled)(list(sentences), return_tensors="pt", padding=True)
        hidden = model(**inputs).last_hidden_state  # (B, T, C)
        mask = inputs["attention_mask"].unsqueeze(-1).float()  # (B, T, 1)
        means = (hidden * mask).sum(1) / mask.sum(1)  # (B, C)
        return (means / means.norm(dim=-1, keepdim=True)).numpy()


@pytest.mark.parametrize("heads_off", [(), ((0, 3),), ((2, 5), (5, 0), (5, 11))])
def test_embeddings_match_transformers_with_the_heads_zeroed_by_hand(bundled, heads_off):
    sentences = (TEXT, "the bank raised its rates again")  # of different lengths: one is padded
    ours = sentence_embeddings(bundled, sentences, heads_off)
    np.testing.assert_allclose(ours, reference_embeddings(bundled, sentences, heads_off), atol=TOLERANCE)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=-1), 1.0, atol=TOLERANCE)


def test_a_head_off_moves_the_embedding_and_changes_the_similarity(bundled):
    intact, off = compare(bundled, TEXT, DEFAULT_SECOND), compare(bundled, TEXT, DEFAULT_SECOND, [(0, 3)])
    reference = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND), [(0, 3)])
    assert off.similarity == pytest.approx(float(reference[0] @ reference[1]), abs=TOLERANCE)
    assert abs(off.similarity - intact.similarity) > 1e-4
    assert intact.tokens[0] == ("[CLS]", "time", "flies", "like", "an", "arrow", "[SEP]")


@pytest.mark.parametrize("heads_off", [(), ((0, 3),), ((4, 1),), ((5, 0), (5, 11)), ((2, 5), (4, 7))])
def test_a_pass_from_the_kept_layer_inputs_is_the_whole_pass(bundled, heads_off):
    """The page keeps what each layer of the intact model reads, and a toggle runs from the first layer with a
    head off: the same embeddings as transformers' whole pass, and as the page's own whole pass."""
    second = "the bank raised its rates again"  # another length than TEXT: one of the pair is padded
    kept = layer_inputs(bundled, TEXT, second)
    tokens = len(compare(bundled, TEXT, second).tokens[0]) + len(compare(bundled, second, TEXT).tokens[0])
    assert len(kept) == bundled.shape.num_layers + 1 and kept[0].shape == (1, tokens, bundled.shape.hidden_size)
    resumed = compare(bundled, TEXT, second, heads_off, intact_inputs=kept)
    np.testing.assert_allclose(resumed.embeddings, reference_embeddings(bundled, (TEXT, second), heads_off),
                               atol=TOLERANCE)
    np.testing.assert_allclose(resumed.embeddings, compare(bundled, TEXT, second, heads_off).embeddings, atol=1e-6)
    assert resumed.heads_off == tuple(sorted(heads_off))


def test_the_ranking_reads_the_kept_layer_inputs_the_toggles_use(bundled):
    """The page makes the pair's intact pass once, for its toggles and its ranking alike."""
    kept = layer_inputs(bundled, TEXT, DEFAULT_SECOND)
    intact, effects = head_ranking(bundled, TEXT, DEFAULT_SECOND, intact_inputs=kept)
    own_intact, own_effects = head_ranking(bundled, TEXT, DEFAULT_SECOND)
    assert effects == own_effects
    np.testing.assert_array_equal(intact.embeddings, own_intact.embeddings)
    _, shifted = head_ranking(bundled, TEXT, DEFAULT_SECOND, intact_inputs=tuple(inputs + 0.5 for inputs in kept))
    assert shifted != own_effects, "they are read"


def test_the_ranking_is_each_head_off_alone_largest_move_first(bundled):
    intact, effects = head_ranking(bundled, TEXT, DEFAULT_SECOND)
    shape = bundled.shape
    assert len(effects) == shape.num_layers * shape.num_heads
    assert [e.moved for e in effects] == sorted((e.moved for e in effects), reverse=True)
    for effect in (effects[0], effects[len(effects) // 2], effects[-1]):
        reference = reference_embeddings(bundled, (TEXT, DEFAULT_SECOND), [(effect.layer, effect.head)])
        assert effect.moved == pytest.approx(1 - float(reference[0] @ intact.embeddings[0]), abs=TOLERANCE)
        assert effect.similarity == pytest.approx(float(reference[0] @ reference[1]), abs=TOLERANCE)
        assert effect.change == pytest.approx(effect.similarity - intact.similarity, abs=1e-7)
    grid = moved_grid(effects, shape.num_layers, shape.num_heads)
    assert grid[effects[0].layer, effects[0].head] == pytest.approx(effects[0].moved) == grid.max()


def test_an_empty_sentence_is_refused_with_a_message(bundled):
    with pytest.raises(ValueError, match="Type a sentence"):
        compare(bundled, TEXT, "  ")
