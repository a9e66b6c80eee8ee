"""A learner's own text in a real Chromium: every chart of every view with a heatmap is drawn, and the browser's
console stays free of errors, whatever the text holds.

"What if it rains tomorrow" drew no heatmap at all: the axes' labels were written into a Vega expression, and
Vega's parser stopped at "if" (tests/page/test_hostile_text.py draws the same charts with vl-convert, view by view).
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from harness.browser import wait_until_settled
from tests.marks import BROWSER_TESTS
from tests.page.test_hostile_text import HOSTILE, PAIR

pytestmark = BROWSER_TESTS

QUERIES = [
    {"text": "what if it rains tomorrow"},
    {"text": HOSTILE, "view": "heads"},
    {"text": HOSTILE, "view": "neuron"},
    {"text": HOSTILE, "text_b": PAIR, "view": "compare"},
    {"text": HOSTILE, "view": "lesson", "step": "4"},
    {"text": HOSTILE, "view": "lab"},
]

# Each chart's state once the page has settled: drawn (a canvas or an SVG with marks) or not.
# The charts the page shows: the lesson keeps the steps beside the one shown on the page, hidden (display: none).
_DRAWN_JS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
  .filter(chart => chart.checkVisibility()).map(chart => {
  const surface = chart.querySelector('canvas, svg.marks');
  const box = surface ? surface.getBoundingClientRect() : {width: 0, height: 0};
  return {label: chart.getAttribute('aria-label') || '', drawn: box.width > 0 && box.height > 0};
})"""


@pytest.fixture
def console_errors(page):
    """The errors the page writes to its console, and its uncaught exceptions, while the test runs (the listeners go
    with it: the tab is handed on to the next test)."""
    errors = []

    def console(message) -> None:
        if message.type == "error":
            errors.append(message.text)

    def uncaught(error) -> None:
        errors.append(str(error))

    page.on("console", console)
    page.on("pageerror", uncaught)
    yield errors
    page.remove_listener("console", console)
    page.remove_listener("pageerror", uncaught)


@pytest.mark.parametrize("query", QUERIES, ids=[q.get("view", "head") for q in QUERIES])
def test_every_chart_is_drawn_and_the_console_has_no_error(console_errors, page, base_url, query):
    page.goto(f"{base_url}/?{urlencode(query)}")
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for(state="attached")
    wait_until_settled(page, quiet_ms=1_000)

    charts = page.evaluate(_DRAWN_JS)
    assert charts, "the view shows a chart"
    assert all(chart["drawn"] for chart in charts), charts
    assert not console_errors, console_errors
