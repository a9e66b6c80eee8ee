"""The logit lens's map kept by its shape (views/lens.py's kept_lens_map) is the map Altair builds for its lens, drawn
the same, its cells lettered or not; and one spec serves every text of its length: a new text sends its numbers,
tokens and rings alone."""

from __future__ import annotations

import json

import numpy as np
import pytest

from components.charts.draw import spec_and_frames
from components.charts.lens import lens_map
from components.views.lens import kept_lens_map
from tests.caches.test_kept_heatmap import HOSTILE, LABELS, drawn

LAYERS = 7  # the embeddings and 6 layers read


def a_lens(rng, positions: list[str]) -> tuple:
    """lens_map's arguments for a made-up lens: probabilities (L + 1, P), top tokens, the first layer of the final
    guess, and the labels."""
    probabilities = rng.random((LAYERS, len(positions))).astype(np.float32)
    tokens = [[f"{positions[(layer + position) % len(positions)]}" for position in range(len(positions))]
              for layer in range(LAYERS)]
    first = rng.integers(0, LAYERS, size=len(positions))
    return probabilities, tokens, first, [str(layer) for layer in range(LAYERS)], list(positions)


@pytest.mark.parametrize("size", [600, 200], ids=["lettered", "tokens-in-tooltips"])
def test_a_kept_lens_map_is_drawn_as_the_one_altair_builds_and_one_spec_serves_every_text(size):
    rng = np.random.default_rng(7)
    options = dict(title="Top next token at each layer", size=size)
    kept = []
    for labels in (LABELS[:12], HOSTILE[:12]):
        arguments = a_lens(rng, labels)
        spec, frames = kept_lens_map(*arguments, **options)
        assert drawn(spec, frames) == drawn(*spec_and_frames(lens_map(*arguments, **options)))
        kept.append(spec)
    assert json.dumps(kept[0]) == json.dumps(kept[1]), "one spec for both texts: the browser swaps the data in"
