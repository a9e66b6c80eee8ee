"""The generation view's step heatmap, kept as a spec on stand-in labels (charts/generation.step_row_spec) and sent
its step's weights apart: the same chart and numbers as heatmap.heatmap's own, its tokens parameters' values (never
inside an expression), one kept spec for every text of its shape."""

from __future__ import annotations

import json

import numpy as np

from components.charts.draw import spec_and_frames
from components.charts.generation import DOMAIN, SCHEME, step_row_spec
from components.charts.heatmap import heatmap, heatmap_frames
from components.charts.label_stand_ins import stand_ins, with_labels
from tests.charts.test_label_stand_ins import HOSTILE, OTHER, same_names

HEADS = ("0", "1", "2", "3")
TITLE = "Step 2, layer 1: the query row of token 7 over the 8 cached keys"


def weights(seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).random((len(HEADS), len(HOSTILE)), dtype=np.float32)  # (nh, S)
    return rows / rows.sum(-1, keepdims=True)


def test_the_kept_spec_given_its_tokens_and_weights_is_the_heatmap_built_on_them():
    standing = stand_ins(HEADS, HOSTILE)
    own, own_frames = spec_and_frames(heatmap(weights(), list(HEADS), list(HOSTILE), title=TITLE,
                                              row_title="query head", column_title="cached key", scheme=SCHEME,
                                              domain=list(DOMAIN), size=320))
    given = with_labels(step_row_spec(standing[HEADS], standing[HOSTILE], TITLE, 320), standing)
    assert same_names(json.dumps(given), standing) == same_names(json.dumps(own), {})
    frames = heatmap_frames(weights(), SCHEME, list(DOMAIN))
    assert frames.keys() == own_frames.keys()
    for name, frame in frames.items():
        assert frame.equals(own_frames[name])


def test_the_tokens_are_parameter_values_and_one_spec_serves_every_text_of_its_shape():
    standing = stand_ins(HEADS, HOSTILE)
    kept = step_row_spec(standing[HEADS], standing[HOSTILE], TITLE, 320)
    other = stand_ins(HEADS, OTHER)
    assert step_row_spec(other[HEADS], other[OTHER], TITLE, 320) == kept, "the stand-ins hold no token"
    given = with_labels(kept, standing)
    assert {name: part for name, part in given.items() if name != "params"} == {
        name: part for name, part in kept.items() if name != "params"}, "the tokens go into parameters alone"
    assert [param["value"] for param in given["params"]] == [list(HEADS), list(HOSTILE)]
