"""Where attention parks (attention/analyses/parks.py): shares known by hand on made-up weights, and the bundled model's
[CLS], which takes half of a middle layer's weight and little of what moves (Kobayashi et al. 2020)."""

from __future__ import annotations

import numpy as np
import pytest

from attention.analyses.parks import PUNCTUATION_NAME, park_places, park_shares
from attention.dissect.heads import head_value_norms
from attention.dissect.trace import layer_attention, projections_for
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode

TEXT = "The cat sat on the mat, and then it slept."


def test_places_of_a_bert_text_are_cls_sep_and_punctuation():
    tokens = ["[CLS]", "hi", ",", "you", ".", "[SEP]"]
    special = np.array([1, 0, 0, 0, 0, 1], dtype=bool)
    places = park_places(tokens, special, special, byte_level=False)
    assert places.names == ("[CLS]", "[SEP]", PUNCTUATION_NAME)
    np.testing.assert_array_equal(places.keys, [[1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1], [0, 0, 1, 0, 1, 0]])


def test_places_of_a_gpt2_text_are_its_first_token_and_punctuation_with_or_without_a_leading_space():
    tokens = ["The", "Ġcat", "Ġ,", ",", "Ġ.", "Ġdog"]
    sinks = np.array([1, 0, 0, 0, 0, 0], dtype=bool)
    places = park_places(tokens, sinks, np.zeros(6, dtype=bool), byte_level=True)
    assert places.names == ("the first token", PUNCTUATION_NAME)
    np.testing.assert_array_equal(places.keys, [[1, 0, 0, 0, 0, 0], [0, 0, 1, 1, 1, 0]])


def test_shares_on_made_up_weights_are_the_ones_counted_by_hand():
    """Two heads, three tokens ([CLS] a [SEP]): head 0 puts everything on [CLS], head 1 spreads evenly. By weight,
    [CLS] gets (3 + 1)/6 = 2/3 and [SEP] 1/6. With ‖f‖ = (0.5, 1, 1) in head 0 and (1, 1, 1) in head 1, what
    moves is 1.5 on [CLS] in head 0, and 1 on each key in head 1: [CLS] (1.5 + 1)/4.5, [SEP] 1/4.5."""
    tokens = ["[CLS]", "a", "[SEP]"]
    special = np.array([1, 0, 1], dtype=bool)
    places = park_places(tokens, special, special, byte_level=False)
    weights = np.stack([np.tile([1.0, 0.0, 0.0], (3, 1)), np.full((3, 3), 1 / 3)])[None]  # (1, 2, 3, 3)
    norms = np.array([[[0.5, 1.0, 1.0], [1.0, 1.0, 1.0]]])  # (1, 2, 3)
    shares = park_shares([(weights, norms), (weights, np.ones_like(norms))], places)
    np.testing.assert_allclose(shares.weight, [[2 / 3, 1 / 6, 0.0]] * 2, rtol=1e-6)
    np.testing.assert_allclose(shares.moved[0], [2.5 / 4.5, 1 / 4.5, 0.0], rtol=1e-6)
    np.testing.assert_allclose(shares.moved[1], shares.weight[1], rtol=1e-6)
    assert shares.busiest() == (0, 0)


def test_the_bundled_model_parks_on_cls_in_its_middle_layers_but_moves_little_from_it(bundled):
    encoding = encode(bundled, TEXT)
    places = park_places(encoding.tokens[0], encoding.sinks[0], encoding.special_tokens_mask[0], byte_level=False)
    layers = []
    for layer in range(bundled.shape.num_layers):
        settings = TraceSettings(layer=layer)
        computed = layer_attention(bundled, encoding, settings)
        layers.append((computed.weights, head_value_norms(computed, None, projections_for(bundled, settings).output)))
    shares = park_shares(layers, places)
    assert shares.places == ("[CLS]", "[SEP]", PUNCTUATION_NAME)
    assert shares.weight.shape == shares.moved.shape == (6, 3)
    layer, place = shares.busiest()
    assert place == 0 and 1 <= layer <= 4, "a middle layer parks most, on [CLS]"
    assert shares.weight[layer, 0] > 0.3
    assert shares.moved[layer, 0] < shares.weight[layer, 0] / 4
    assert shares.weight.sum(axis=1).max() <= 1 + 1e-5


def test_value_norms_need_the_output_projection_of_a_trained_source(bundled):
    computed = layer_attention(bundled, encode(bundled, TEXT), TraceSettings(layer=1))
    with pytest.raises(ValueError, match="output projection"):
        head_value_norms(computed, [0])
