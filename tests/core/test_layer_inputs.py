"""A layer's input made from the layer before it equals the model's own forward pass, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from attention.text.encoding import encode, encode_batch
from attention.text.layer_inputs import next_layer_input


@pytest.mark.parametrize("pair", [("time flies like an arrow", None),
                                  ("I am looking for a hot job", "The bakery down the street is hiring.")])
def test_layer_by_layer_is_the_forward_pass(bundled, pair):
    whole = encode(bundled, *pair)
    step = encode(bundled, *pair, layers=())
    for layer in range(bundled.shape.num_layers + 1):
        step = next_layer_input(bundled, step, layer)
        np.testing.assert_array_equal(step.layer_input(layer), whole.hidden_states[layer], err_msg=str(layer))
        assert [index for index, hidden in enumerate(step.hidden_states) if hidden is not None] == [layer]


def test_a_padded_batch_layer_by_layer_is_the_forward_pass(tiny):
    texts = [("time flies like an arrow", None), ("I am looking for a hot job and a warm flat near the river", None)]
    whole = encode_batch(tiny, texts)
    assert not whole.attention_mask.all(), "the short text must be padded"
    step = encode_batch(tiny, texts, layers=())
    for layer in range(tiny.shape.num_layers + 1):
        step = next_layer_input(tiny, step, layer)
        np.testing.assert_array_equal(step.layer_input(layer), whole.hidden_states[layer], err_msg=str(layer))


def test_the_layer_before_must_be_kept(tiny):
    tokens_only = encode(tiny, "time flies like an arrow", layers=())
    with pytest.raises(ValueError, match="layers"):
        next_layer_input(tiny, tokens_only, 1)
    with pytest.raises(ValueError, match="layer must be from 0 to 2"):
        next_layer_input(tiny, tokens_only, 3)
