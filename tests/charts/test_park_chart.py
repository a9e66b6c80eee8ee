"""Where attention parks (components/charts/moves.py): the spec the all-heads view keeps (park_spec, built on no
layer at all) is the one Altair builds for any shares, whatever the layer count, so that a new text, layer count or
setting sends its bars alone."""

from __future__ import annotations

import numpy as np
import pytest

from components.charts.draw import spec_and_frames
from components.charts.moves import park_chart, park_frame, park_spec

PLACES = ("[CLS]", "[SEP]", "punctuation")


@pytest.mark.parametrize("width", [900, 360], ids=["side-by-side", "one-under-the-other"])
@pytest.mark.parametrize("layers", [6, 12])
def test_the_kept_spec_is_altairs_own_for_any_shares(width, layers):
    rng = np.random.default_rng(layers)
    weight, moved = rng.random((layers, len(PLACES))), rng.random((layers, len(PLACES)))
    spec, frames = spec_and_frames(park_chart(PLACES, weight, moved, width=width))
    assert spec == park_spec(PLACES, width)
    assert list(frames) == ["data-0"]
    assert frames["data-0"].equals(park_frame(PLACES, weight, moved))
