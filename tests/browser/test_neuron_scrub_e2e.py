"""The neuron view in a real Chromium: its chart's own head and query inputs, by key and by link.

Every head and query token of a short text is in the browser (components/charts/neuron_chart.py): an arrow
key repaints the chart at once, and the chart's selection then reruns the page, which brings the URL
and the caption up to it. q ⊙ k_j is the one number the browser computes itself: it is read back from
the chart's tooltip and checked against the trace.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from attention.dissect.trace import build_trace
from attention.models.loading import load_model
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.charts.neuron_chart import DRAWN_DIMENSIONS, FIRST_DIMENSION
from harness.browser import (
    HeldReplies,
    chart_input,
    load_page,
    press_chart_key,
    wait_for_change,
    wait_until_settled,
)
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 1366, "height": 1400}  # tall: the whole chart on screen

TEXT = "time flies like an arrow"  # 7 tokens with [CLS] and [SEP]
PRODUCT = "q_i · k_j,i"  # the products' tooltip title for their value


def neuron_chart(page):
    return page.locator('[data-testid="stVegaLiteChart"]').first


def open_neuron(page, base_url: str, query: str = "") -> None:
    load_page(page, f"{base_url}/?view=neuron{query}", drawn=lambda p: neuron_chart(p).locator("canvas"))


def pixels(page) -> str:
    return neuron_chart(page).locator("canvas").evaluate("canvas => canvas.toDataURL()")


def expect_page_at(page, head: int, query: int, token: str) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_text(f"Query token {query} ({token}), layer 0, head {head}.")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"[?&]query={query}(&|$)"))
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_the_query_input_repaints_before_the_server_answers(page, base_url):
    from playwright.sync_api import expect

    replies = HeldReplies.on(page)
    open_neuron(page, base_url)
    before = pixels(page)

    query = replies.press(page, "query")
    assert wait_for_change(lambda: pixels(page), before)[0] != before, "the chart waited for the server"
    expect(page.get_by_text("Query token 1 (time), layer 0, head 0.")).to_be_visible()  # the server's, not yet moved

    replies.release()
    wait_until_settled(page)
    expect_page_at(page, 0, 2, "flies")
    expect(query).to_have_value("2")


def test_head_and_query_keys_show_what_a_link_opens(page, base_url):
    open_neuron(page, base_url)
    press_chart_key(page, "head", "ArrowRight")
    press_chart_key(page, "head", "ArrowRight")
    press_chart_key(page, "query", "ArrowLeft")
    expect_page_at(page, 2, 0, "[CLS]")
    scrubbed = pixels(page)

    open_neuron(page, base_url, "&head=2&query=0")
    assert pixels(page) == scrubbed, "the head and query reached by keys are drawn as their link draws them"


def test_the_products_the_browser_computes_are_q_times_k(page, base_url):
    open_neuron(page, base_url, "&head=5&query=3&layer=0")
    press_chart_key(page, "query", "ArrowRight")  # query 4, multiplied in the browser after the move
    rows = product_tooltips(page)
    assert rows, "no product cell answered the pointer"
    model = load_model()
    trace = build_trace(model, encode(model, TEXT), TraceSettings(head=5))
    for row in rows:
        key = int(row["key token"].split(":")[0])  # "3: like"
        dimension = int(row["dimension of the head"])
        expected = trace["Q"][0, 4, dimension] * trace["K"][0, key, dimension]
        shown = float(row[PRODUCT].replace("\N{MINUS SIGN}", "-"))  # d3's format writes a true minus
        assert shown == pytest.approx(float(expected), abs=6e-5), row


def test_a_wide_heads_products_are_drawn_a_window_at_a_time_moved_in_the_browser(page, base_url):
    """The identity source's head is as wide as the model: its products are drawn DRAWN_DIMENSIONS at a time, and
    the window's own input moves them with no rerun; a product read off the second window is q_i · k_j,i there."""
    from playwright.sync_api import expect

    open_neuron(page, base_url, "&source=identity&query=3&layer=0")
    window = page.locator(f'.vega-bindings input[type="range"][name="{FIRST_DIMENSION}"]')
    before = pixels(page)
    window.press("ArrowRight")
    expect(window).to_have_value(str(DRAWN_DIMENSIONS))
    assert wait_for_change(lambda: pixels(page), before)[0] != before, "the window did not move"
    rows = product_tooltips(page)
    assert rows, "no product cell answered the pointer"
    model = load_model()
    trace = build_trace(model, encode(model, TEXT), TraceSettings(source="identity"))
    for row in rows:
        key = int(row["key token"].split(":")[0])
        dimension = int(row["dimension of the head"])
        assert DRAWN_DIMENSIONS <= dimension < 2 * DRAWN_DIMENSIONS, row
        expected = trace["Q"][0, 3, dimension] * trace["K"][0, key, dimension]
        shown = float(row[PRODUCT].replace("\N{MINUS SIGN}", "-"))
        assert shown == pytest.approx(float(expected), abs=6e-5), row
    query_cells = cell_tooltips(page, "query")  # q, drawn in the same window
    assert query_cells, "no cell of q answered the pointer"
    for row in query_cells:
        dimension = int(row["dimension of the head"])
        assert DRAWN_DIMENSIONS <= dimension < 2 * DRAWN_DIMENSIONS, row
        shown = float(row["value"].replace("\N{MINUS SIGN}", "-"))
        assert shown == pytest.approx(float(trace["Q"][0, 3, dimension]), abs=6e-5), row


def product_tooltips(page, wanted: int = 3) -> list[dict[str, str]]:
    """The tooltips of a few cells of q ⊙ K, the heatmap under the numbers."""
    return cell_tooltips(page, PRODUCT, wanted)


def cell_tooltips(page, title: str, wanted: int = 3) -> list[dict[str, str]]:
    """The tooltips of a few cells whose tooltip has title (PRODUCT for q ⊙ K; "query" for q): the pointer walks
    down the chart from its first third, across its left half, until it has read wanted of them."""
    canvas = neuron_chart(page).locator("canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    found: dict[str, dict[str, str]] = {}
    for y in np.arange(box["y"] + box["height"] / 3, box["y"] + box["height"], 6):
        for x in np.arange(box["x"] + 100, box["x"] + box["width"] / 2, 37):
            page.mouse.move(float(x), float(y))
            table = page.locator("#vg-tooltip-element.visible table")
            if table.count() == 0:
                continue
            cells = table.locator("tr").evaluate_all(
                "rows => rows.map(row => [...row.children].map(cell => cell.innerText.trim()))")
            row = {name.rstrip(":"): value for name, value in cells}
            if title in row:
                found[str(row)] = row
                if len(found) >= wanted:
                    return list(found.values())
    return list(found.values())


def test_a_query_past_the_end_is_clamped_then_another_can_be_chosen(page, base_url):
    from playwright.sync_api import expect

    open_neuron(page, base_url, "&query=999")
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="query=999 does not exist")).to_be_visible()
    expect(chart_input(page, "query")).to_have_value("6")
    expect(page).to_have_url(re.compile(r"[?&]query=6(&|$)"))

    press_chart_key(page, "query", "ArrowLeft")
    expect_page_at(page, 0, 5, "arrow")
