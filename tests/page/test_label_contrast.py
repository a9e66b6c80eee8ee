"""Axis, legend and header text dark enough to read from the back of a room: WCAG AA's 4.5:1 on the page's white at
least, on every chart the page sends, and darker on a projector. Streamlit's theme greys chart labels to
(128, 132, 149), 3.7:1, unless the chart's config colours them; read here from the configs the page sends."""

from __future__ import annotations

import json

import pytest

from tests import pages

AA = 4.5  # WCAG 2's least contrast for text of normal size
PROJECTED = 12  # a projector washes colours out: presentation mode's labels as dark as the page's text
TEXT_PARTS = ("axis", "legend", "header")
VIEWS = ({"view": "head", "text_b": "the bank raised its rates"}, {"view": "heads"}, {"view": "compare"},
         {"view": "counting"}, {"view": "lesson", "step": "6"})


def luminance(colour: str) -> float:
    """WCAG 2's relative luminance of a "#rrggbb" colour."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_on_white(colour: str) -> float:
    return 1.05 / (luminance(colour) + 0.05)


def test_the_themes_grey_would_not_pass():
    assert contrast_on_white("#808495") < AA  # what Streamlit draws where a chart's config says nothing


def label_contrasts(query: dict) -> list[float]:
    """The contrast on white of every chart's axis, legend and header label and title colours, as its config gives
    them; a colour the config does not give counts as the theme's grey."""
    page = pages.open_page(query)
    pages.assert_healthy(page)
    contrasts = []
    for chart in pages.charts(page):
        config = json.loads(chart.proto.spec).get("config", {})
        for part in TEXT_PARTS:
            for name in ("labelColor", "titleColor"):
                contrasts.append(contrast_on_white(config.get(part, {}).get(name, "#808495")))
    assert contrasts, f"{query}: no chart drawn"
    return contrasts


@pytest.mark.parametrize("query", VIEWS, ids=[query["view"] for query in VIEWS])
def test_every_charts_labels_pass_wcag_aa(query):
    assert min(label_contrasts(query)) >= AA


@pytest.mark.parametrize("query", VIEWS[:2], ids=[query["view"] for query in VIEWS[:2]])
def test_on_a_projector_the_labels_are_as_dark_as_the_text(query):
    assert min(label_contrasts({**query, "present": "1"})) >= PROJECTED
