"""bench/chart_share_app.py draws the app's page with the one-head view's chart as the bench says: every head of
the text in its data, the picked head alone, or no chart, and the rest of the view as the app's."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.views import head as one_head_view
from tests.pages import assert_healthy, chart_datasets, charts

BENCH_PAGE = str(Path(__file__).resolve().parents[2] / "bench" / "chart_share_app.py")
TEXT = "time flies like an arrow"  # 7 tokens; the bundled model's 6 layers of 12 heads


def bench_page(drawn: str, monkeypatch) -> AppTest:
    monkeypatch.setenv("BENCH_CHART", drawn)
    # The bench's page replaces these for its server's process; here they are put back after the test.
    monkeypatch.setattr(one_head_view, "send_plan", one_head_view.send_plan)
    monkeypatch.setattr(one_head_view, "scrub_heatmap", one_head_view.scrub_heatmap)
    page = AppTest.from_file(BENCH_PAGE, default_timeout=120)
    page.query_params["view"], page.query_params["text"] = "head", TEXT
    page.run()
    assert_healthy(page)
    return page


def heads_sent(page: AppTest) -> int:
    """The heads in the weights chart's cells: a column each, beside the cell's row and column."""
    [chart] = charts(page)
    [cells] = [frame for name, frame in chart_datasets(chart).items() if name.endswith("cells")]
    return len(cells.columns) - 2


@pytest.mark.parametrize(("drawn", "heads"), [("every", 6 * 12), ("one", 1)])
def test_the_chart_holds_every_head_or_the_picked_one(drawn, heads, monkeypatch):
    page = bench_page(drawn, monkeypatch)
    assert heads_sent(page) == heads
    assert page.subheader[0].value == "Layer 0, head 0"


def test_without_the_chart_the_rest_of_the_view_is_drawn(monkeypatch):
    page = bench_page("none", monkeypatch)
    assert not charts(page)
    assert page.subheader[0].value == "Layer 0, head 0"
    assert page.metric  # the proof beside where the chart was
