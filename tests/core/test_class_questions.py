"""The class questions' computed answers (attention/labs/class_questions.py) against transformers and PyTorch.

The page's answer must be what transformers' own weights say: the key of largest weight in transformers' row, the
head whose mean weight on the previous token is highest in transformers' layer, the row sum of transformers' causal
weights, and the entropy torch.distributions computes for the same random scores.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.dissect.parity import transformers_weights
from attention.dissect.trace import build_trace, layer_attention
from attention.labs.class_questions import (
    ENTROPY_CHOICES,
    MAX_CHOICES,
    entropy_when_head_size_doubles,
    most_attended_key,
    previous_token_head,
    row_sums_to_one,
    token_labels,
)
from attention.labs.scaling_lab import random_scores
from attention.stages import masks
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode

TEXT = "the cat sat on the mat because the cat was tired"
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def bert_run(bundled):
    encoding = encode(bundled, TEXT)
    return encoding, {layer: transformers_weights(bundled, encoding, layer)[0] for layer in (0, 2, 5)}


@pytest.mark.parametrize("layer", [0, 2, 5])
def test_the_most_attended_key_is_transformers_argmax_for_every_head_and_query(bundled, bert_run, layer):
    encoding, theirs = bert_run
    tokens = encoding.tokens[0]
    for head in range(bundled.shape.num_heads):
        ours = build_trace(bundled, encoding, TraceSettings(layer=layer, head=head))["weights"][0]  # (T, T)
        np.testing.assert_allclose(ours, theirs[layer][head], atol=TOLERANCE)
        for query in range(len(tokens)):
            computed = most_attended_key(ours, tokens, query)
            assert computed.choices == token_labels(tokens)
            assert computed.answer == int(np.argmax(theirs[layer][head, query])), (head, query)


def test_a_long_texts_choices_are_the_keys_of_largest_weight_and_hold_the_answer():
    tokens = [f"t{i}" for i in range(40)]
    weights = np.random.default_rng(0).dirichlet(np.ones(40), size=40).astype(np.float32)
    computed = most_attended_key(weights, tokens, 7)
    assert len(computed.choices) == MAX_CHOICES
    assert computed.choices[computed.answer] == f"t{int(np.argmax(weights[7]))} ({int(np.argmax(weights[7]))})"


@pytest.mark.parametrize("layer", [0, 2, 5])
def test_the_previous_token_head_is_the_one_transformers_weights_name(bundled, bert_run, layer):
    encoding, theirs = bert_run
    ours = layer_attention(bundled, encoding, TraceSettings(layer=layer)).weights[0]  # (nh, T, T)
    computed = previous_token_head(ours)
    on_previous = np.array([np.diagonal(head, offset=-1).mean() for head in theirs[layer]])  # (nh,)
    assert computed.choices == tuple(f"Head {head}" for head in range(bundled.shape.num_heads))
    assert computed.answer == int(np.argmax(on_previous))
    assert f"{on_previous.max():.2f}" in computed.why


def test_a_causal_row_sums_to_one_as_transformers_gpt2_rows_do(tiny_gpt2_model):
    encoding = encode(tiny_gpt2_model, "the cat sat on the mat and the dog sat too")
    theirs = transformers_weights(tiny_gpt2_model, encoding, 1)[0]  # (nh, T, T)
    for head in range(tiny_gpt2_model.shape.num_heads):
        trace = build_trace(tiny_gpt2_model, encoding, TraceSettings(layer=1, head=head))
        assert trace.mask_kind == "causal"
        allowed = masks.allowed_keys(trace.mask_kind, torch.from_numpy(encoding.attention_mask))[0].numpy()  # (T, T)
        scaled = trace["scaled"][0]  # (T, T)
        for query in range(scaled.shape[0]):
            computed = row_sums_to_one(scaled[query], allowed[query])
            assert computed.choices[computed.answer] == "Yes"
            assert f"{theirs[head, query].sum():.6f}" in computed.why
            zeroed = torch.softmax(torch.from_numpy(scaled[query]), dim=-1)[torch.from_numpy(allowed[query])].sum()
            assert f"{float(zeroed):.4f}" in computed.why
            np.testing.assert_allclose(theirs[head, query][~allowed[query]], 0.0, atol=TOLERANCE)


def test_a_row_with_every_key_masked_does_not_sum_to_one():
    computed = row_sums_to_one(np.array([0.5, 1.0, -2.0]), np.zeros(3, dtype=bool))
    assert computed.choices[computed.answer] == "No"


@pytest.mark.parametrize("head_size", [4, 32, 64])
def test_the_entropy_falls_when_d_k_doubles_unscaled_as_torch_measures_it(head_size):
    tokens = 12
    computed = entropy_when_head_size_doubles(head_size, tokens)
    reference = [float(torch.distributions.Categorical(logits=torch.from_numpy(random_scores(size, tokens))
                                                       ).entropy().mean()) for size in (head_size, 2 * head_size)]
    expected = 1 if reference[1] < reference[0] else 0
    assert ENTROPY_CHOICES[computed.answer] == ENTROPY_CHOICES[expected] == "It falls"
    assert f"{reference[0]:.3f}" in computed.why and f"{reference[1]:.3f}" in computed.why
