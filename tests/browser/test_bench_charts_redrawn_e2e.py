"""The bench's count of the charts a press redraws (bench/page_speed.ChartsRedrawn: other numbers or another spec
than the page showed), in Chromium against the app's one-head view. A causal mask redraws the weights chart; a move
of the chart's own Layer input is drawn in the browser, and the run that follows sends the chart again unchanged,
which redraws nothing; the chart's table, asked for, is drawn in a fragment of its own, with no chart; the model's own
mask again redraws it. (tests/tooling/test_bench_every_control.py holds a chart sent by its hash to the numbers it
brings back.)"""

from __future__ import annotations

from bench.page_speed import CHART_DRAWN, Move, chart_input, open_page, time_move
from harness.browser import SIZED_JS
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS


def test_a_mask_redraws_its_chart_and_a_chart_input_or_a_table_redraws_none(browser, base_url):
    charts: list[int] = []
    page = open_page(browser, f"{base_url}/?text=the+cat+sat+on+the+mat", CHART_DRAWN, charts=charts)
    try:
        # open_page has waited for the page's report of its size and its run: on a busy machine that run came
        # after a quiet moment, and the first press then counted its redraw as well as its own
        assert page.evaluate(SIZED_JS), "the page has not reported its size"
        counted = []
        for move in (Move(".st-key-mask button:has-text('causal')", "Space"),
                     *chart_input("layer", ["ArrowRight"]),
                     Move(".st-key-table_chart-weights input[type='checkbox']", "Space"),
                     Move(".st-key-mask button:has-text(\"model's own\")", "Space")):
            before = len(charts)
            timing = time_move(page, move)
            counted.append(sum(charts[before:]))
            assert timing.last_message_ms is not None, f"{move.selector}: no run answered it"
    finally:
        page.context.close()
    assert counted == [1, 0, 0, 1]
