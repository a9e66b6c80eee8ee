"""The logit lens of the induction lab's trained decoders (attention.analyses.logit_lens.residual_lens) reads what
their run keeps (attention.labs.induction.TrainedStreams) and gives what a direct forward pass of the trained model
gives: its last row is the model's own next-token softmax on the probe, each earlier row the softmax of the model cut
after that layer. And what the run keeps of each model is small.

Letters used in shape comments: L layers, P the probe's tokens, C width, V vocabulary, k tokens kept.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from attention.analyses.logit_lens import residual_lens
from attention.labs.induction import LAYER_COUNTS, InductionConfig, training

# A few steps of a tiny run: the lens's plumbing, not the learning (tests/core/test_induction.py has that).
TINY = InductionConfig(vocab_size=11, tokens=10, period_low=2, period_high=5, heads=3, width=12, head_size=4,
                       steps=12, batch_size=8, held_out=8, probes=4)
CLOSE = dict(rtol=1e-6, atol=1e-6)


@pytest.fixture(scope="module")
def trained():
    """The last progress of a tiny run (its models as trained) and the run it ends with."""
    *_, last = training(TINY)
    return last.models, last.snapshot()


def cut_after(model, layer: int):
    """A copy of the model with its layers after `layer` removed: its forward's logits are row layer + 1's."""
    cut = copy.deepcopy(model)
    for name in ("query", "key", "value", "output"):
        setattr(cut, name, torch.nn.ParameterList(list(getattr(cut, name))[:layer + 1]))
    return cut


def direct_rows(model, example: np.ndarray) -> list[torch.Tensor]:
    """L + 1 x (P, V): the next-token softmax on the example of the model's embeddings alone, then of the model
    cut after each of its layers in turn (the last: the whole model's forward pass)."""
    tokens = torch.from_numpy(example)[None]  # (1, P)
    with torch.inference_mode():
        embedded = model.token_embedding[tokens[0]] + model.position_embedding[:tokens.shape[1]]  # (P, C)
        rows = [(embedded @ model.unembedding).softmax(-1)]  # (P, V): row 0, the embeddings read
        rows += [cut_after(model, layer)(tokens)[0][0].softmax(-1) for layer in range(model.num_layers)]  # L x (P, V)
    return rows


@pytest.mark.parametrize("layers", LAYER_COUNTS)
def test_every_row_is_a_direct_forward_pass_of_the_trained_model(trained, layers):
    models, run = trained
    model, kept = models[LAYER_COUNTS.index(layers)], run.model(layers).streams
    assert kept.steps_run == run.steps_run == TINY.steps
    lens = residual_lens(kept.streams, kept.unembedding, kept.example.tolist(), top_k=5)
    rows = direct_rows(model, kept.example)
    assert len(rows) == lens.top_ids.shape[0] == layers + 1
    for row, (top_ids, top_probabilities) in enumerate(zip(lens.top_ids, lens.top_probabilities, strict=True)):
        expected = rows[row].topk(5, dim=-1)  # (P, k) values and indices
        np.testing.assert_allclose(top_probabilities, expected.values.numpy(), **CLOSE)
        np.testing.assert_array_equal(top_ids[:, 0], expected.indices[:, 0].numpy())
    guess = rows[-1].argmax(-1)  # (P,) the trained model's own next token at each position
    np.testing.assert_array_equal(lens.prediction_ids, guess.numpy())
    np.testing.assert_allclose(lens.prediction_probability,
                               torch.stack([row.gather(-1, guess[:, None])[:, 0] for row in rows]).numpy(), **CLOSE)
    assert lens.tokens == tuple(str(token) for token in kept.example)
    assert lens.positions == tuple(range(len(kept.example)))


def test_the_run_keeps_the_streams_and_unembedding_not_the_weights(trained):
    _, run = trained
    for history in run.models:
        kept = history.streams
        probe = 2 * TINY.probe_half
        assert kept.streams.shape == (history.layers + 1, probe, TINY.width)
        assert kept.unembedding.shape == (TINY.width, TINY.vocab_size)
        assert kept.nbytes == 4 * ((history.layers + 1) * probe * TINY.width + TINY.width * TINY.vocab_size) + 8 * probe


def test_at_the_pages_largest_settings_a_run_keeps_under_100_kb_for_the_lens():
    """The page's largest vocabulary (64) and heads (8): the streams do not grow with the heads."""
    config = InductionConfig(vocab_size=64, heads=8, steps=1, held_out=2, probes=1, batch_size=2)
    run = next(iter(training(config))).snapshot()
    kept = sum(history.streams.nbytes for history in run.models)
    assert kept == 4 * (5 * 24 * 64 + 2 * 64 * 64) + 2 * 8 * 24 < 100_000  # 63,872 bytes


def test_a_lens_of_streams_that_do_not_fit_their_head_or_tokens_says_so():
    with pytest.raises(ValueError, match=r"\(L \+ 1, T, C\) with T = 3"):
        residual_lens(np.zeros((2, 3, 4)), np.zeros((5, 6)), [0, 1, 2])
    with pytest.raises(ValueError, match="top_k must be an integer from 1 to 6"):
        residual_lens(np.zeros((2, 3, 4)), np.zeros((4, 6)), [0, 1, 2], top_k=7)
