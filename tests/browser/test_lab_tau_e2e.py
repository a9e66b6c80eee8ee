"""The scaling lab in Chromium: τ moves on the random-softmax chart's own input, drawn by the browser alone.

The page's messages to the server are held while τ moves (Playwright routes the websocket), so the server
cannot have run the script: what changes on the chart meanwhile, the browser drew from the data it had.
"""

from __future__ import annotations

import re

import pytest

from harness.browser import chart_input, chart_input_readout, load_page, open_tab
from tests.browser.frames import HeldMessages
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

CHART = ".st-key-chart-random-softmax"
# What the chart draws: its SVG marks (lines, points, rules, legend), exact.
PICTURE_JS = "chart => chart.querySelector('svg.marks').innerHTML"
# Its curves alone: every line's and point's path, in order (the legend's frame may be laid out a few px apart).
CURVES_JS = """chart => [...chart.querySelectorAll('svg.marks g.mark-line path, svg.marks g.mark-symbol path')]
  .map(mark => mark.getAttribute('transform') + mark.getAttribute('d') + mark.getAttribute('stroke')).join(' ')"""
OPEN_TIMEOUT_MS = 180_000  # the first lab of a server loads the model and measures softmax at every τ


# One line a scaling in each of the two panels: the fixed scalings' rows, sent once with no τ, drawn at every τ.
LINES = 4 * 2


def lines(page) -> int:
    return page.locator(CHART).locator("svg.marks g.mark-line path").count()


def picture(page) -> str:
    return page.locator(CHART).evaluate(PICTURE_JS)


def curves(page) -> str:
    return page.locator(CHART).evaluate(CURVES_JS)


def open_lab(page, base_url: str, query: str = "") -> None:
    page.set_default_timeout(OPEN_TIMEOUT_MS)
    load_page(page, f"{base_url}/?view=lab{query}", drawn=lambda tab: tab.locator(f"{CHART} svg.marks"))


@pytest.mark.own_tab  # its websocket is watched or held
def test_tau_moves_on_the_chart_with_no_rerun_and_the_page_follows_after(browser, page, base_url):
    from playwright.sync_api import expect

    messages = HeldMessages(page)
    open_lab(page, base_url)
    expect(chart_input_readout(page, "temperature")).to_have_text("1")
    before = picture(page)
    assert "÷ τ = 1<" in before, "the legend names τ = 1"
    assert lines(page) == LINES

    messages.holding = True
    tau = chart_input(page, "temperature")
    tau.focus()
    for _ in range(5):
        tau.press("ArrowRight")
    expect(chart_input_readout(page, "temperature")).to_have_text("1.25")
    page.wait_for_function(f"() => document.querySelector('{CHART} svg.marks').innerHTML !== {before!r}",
                           timeout=10_000)
    moved = picture(page)
    moved_curves = curves(page)
    assert "÷ τ = 1.25" in moved, "the legend names the τ the input holds"
    assert lines(page) == LINES, "every scaling's line at the new τ, the fixed ones too"
    assert "temperature=" not in page.url, "no script ran: the URL has not moved yet"
    messages.wait_for_held(page)
    assert messages.held, "the move was reported to the server (held here)"

    messages.release()
    expect(page).to_have_url(re.compile(r"[?&]temperature=1\.25(&|$)"))
    expect(page.get_by_text("A fixed τ = 1.25 does not grow with d_k")).to_be_visible()
    assert picture(page) == moved, "the rerun after the move leaves the chart as the browser drew it"

    linked = open_tab(browser)
    try:
        open_lab(linked, base_url, "&temperature=1.25")
        assert curves(linked) == moved_curves, "τ = 1.25 reached in the browser is drawn as a link to it draws it"
        assert "÷ τ = 1.25" in picture(linked)
    finally:
        linked.context.close()

