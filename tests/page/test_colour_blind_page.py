"""The colours for colour-blind readers, a setting of each reader's own (colour_blind=1): the browser's cells and
the server's pictures switch to cividis and orange-blue (components/charts/palettes.py), and a chart kept for one
reader's palette is never served to another's (components/caches/chart_memos.py keys on it)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from components.charts.colours import colour_stops
from tests.pages import assert_healthy, charts, open_page, picture_values, weights_of

LONG_TEXT = "the quick brown fox jumps over the lazy dog " * 8  # past 64 tokens: pictures


def colours_named(chart) -> set[str]:
    """The colour schemes a chart's spec names and the first stop of each colour range it lists."""
    found = set()

    def walk(part):
        if isinstance(part, dict):
            if isinstance(part.get("scheme"), str):
                found.add(part["scheme"])
            if isinstance(part.get("range"), list) and part["range"] and str(part["range"][0]).startswith("#"):
                found.add(part["range"][0])
            for value in part.values():
                walk(value)
        elif isinstance(part, list):
            for value in part:
                walk(value)

    walk(json.loads(chart.proto.spec))
    return found


def datasets(chart) -> dict[str, pd.DataFrame]:
    return {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets}


def picture_of(chart, layer: int, head: int) -> tuple[str, list[float]]:
    frames = datasets(chart)
    pictures, ranges = frames["p0-pictures"], frames["p0-ranges"]
    url = pictures[(pictures["layer"] == layer) & (pictures["head"] == head)]["url"].item()
    return url, ranges[(ranges["layer"] == layer) & (ranges["head"] == head)]["value"].tolist()


CIVIDIS_LIGHT, BLUES_WHITE = colour_stops("cividis")[0], colour_stops("blues")[0]


def test_the_toggle_switches_the_weights_to_cividis_and_the_scores_to_orange_blue_and_the_link_keeps_it():
    page = open_page({"layer": "2", "head": "5"})
    assert_healthy(page)
    assert BLUES_WHITE in colours_named(charts(page)[0]) and CIVIDIS_LIGHT not in colours_named(charts(page)[0])
    page.toggle(key="colour_blind").set_value(True).run()
    assert_healthy(page)
    assert page.query_params["colour_blind"] == "1"
    assert CIVIDIS_LIGHT in colours_named(charts(page)[0]) and BLUES_WHITE not in colours_named(charts(page)[0])
    page.segmented_control(key="head_stage").set_value("Raw scores Q·Kᵀ").run()
    assert_healthy(page)
    named = colours_named(charts(page)[0])
    assert "blueorange" in named and "redblue" not in named
    page.toggle(key="colour_blind").set_value(False).run()
    assert "colour_blind" not in page.query_params, "the default leaves the link"
    assert "redblue" in colours_named(charts(page)[0])


@pytest.mark.parametrize("order", [("0", "1", "0"), ("1", "0", "1")], ids=["standard first", "colour-blind first"])
def test_two_readers_with_different_palettes_each_get_their_own_pictures(order, bundled):
    """The same long text and head, opened by readers of both palettes in turn: each one's pictures are drawn in
    its own palette, though the first reader's were kept for the text (a shared cache that ignored the palette would
    hand the second reader the first one's)."""
    weights = weights_of(bundled, LONG_TEXT, layer=1, head=3)  # (T, T)
    for colour_blind in order:
        page = open_page({"text": LONG_TEXT, "layer": "1", "head": "3", "colour_blind": colour_blind})
        assert_healthy(page)
        [chart] = charts(page)
        url, domain = picture_of(chart, 1, 3)
        own, other = ("cividis", "blues") if colour_blind == "1" else ("blues", "cividis")
        np.testing.assert_allclose(picture_values(url, weights.shape, domain, own), weights, atol=3 * domain[1] / 255)
        assert not np.allclose(picture_values(url, weights.shape, domain, other), weights, atol=3 * domain[1] / 255)
        assert (CIVIDIS_LIGHT if colour_blind == "1" else BLUES_WHITE) in colours_named(chart)


def test_a_class_follower_keeps_their_own_palette():
    from components.page.page_state import FOLLOWED, NOT_FOLLOWED

    assert "colour_blind" in NOT_FOLLOWED and "colour_blind" not in FOLLOWED
