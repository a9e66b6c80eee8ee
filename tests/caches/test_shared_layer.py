"""The layer the page's cache shares by reference with every session (layer_weights): whatever reads it
cannot write into it, so one view's mistake raises there instead of changing every student's numbers.

The bundled model, through the real cache (components/caches/layers.py), in the test's own process.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention.dissect import heads
from attention.models.model_list import BUNDLED_MODEL
from attention.stages.settings import TraceSettings
from components.caches.layers import layer_weights

TEXT = "the shared layer of one text, read by every session"


def test_a_write_into_the_shared_layer_raises_and_every_session_still_gets_its_numbers():
    settings = TraceSettings(layer=2)
    layer = layer_weights(BUNDLED_MODEL, TEXT, "", settings)
    kept = {"weights": layer.weights.copy(), "concat": layer.concat.copy(), "Q": layer.projected["Q"].copy()}
    for name, written in [("weights", layer.weights), ("one head's weights", layer.weights[0, 3]),
                          ("every head's weights, as the charts get them", heads.head_weights(layer)),
                          ("concat", layer.concat), ("context", layer.context), ("Q", layer.projected["Q"]),
                          ("K split", layer.split("K")), ("attention mask", layer.attention_mask)]:
        with pytest.raises(ValueError, match="read-only"):
            written[(0,) * written.ndim] = 0.5
            pytest.fail(f"{name} was written to")
        with pytest.raises(ValueError, match="read-only"):
            written *= 2
            pytest.fail(f"{name} was scaled in place")
    again = layer_weights(BUNDLED_MODEL, TEXT, "", TraceSettings(layer=2, head=5))
    assert again is layer, "one layer for every head and session: the cache's own object"
    np.testing.assert_array_equal(again.weights, kept["weights"])
    np.testing.assert_array_equal(again.concat, kept["concat"])
    np.testing.assert_array_equal(again.projected["Q"], kept["Q"])
