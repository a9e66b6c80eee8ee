"""A heatmap's numbers as a table, reached by the keyboard alone in Chromium: Tab from the top of the page to the
toggle under the one-head chart (its focus seen), Space switches it on, and the table that comes is read as a
table, its rows and columns named by the tokens; Tab goes on into the table's box, whose focus is seen too; the
chart's own Head input, moved by its arrow key, brings the next head's table. axe-core finds no serious violation
on the page with the table open. The toggle reruns its table alone, not the view around it."""

from __future__ import annotations

import re

import pytest

from harness.axe import serious_violations
from harness.browser import act_and_measure, chart_input, load_page, press_chart_key, wait_until_settled
from tests.browser.frames import answer, opened_watched
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

QUERY = "?text=time+flies+like+an+arrow&layer=2&head=5"
MOST_TABS = 80  # the sidebar's controls and the view's come before the chart and the toggle under it
TOGGLE = "Show the numbers as a table"

# How an element and the boxes around it look: outlines, shadows and borders (Streamlit marks a toggle's focus on
# the box around its input).
_LOOK_JS = """element => {
    const boxes = [element];
    for (let up = element.parentElement; up && boxes.length < 5; up = up.parentElement) boxes.push(up);
    return boxes.map(box => { const s = getComputedStyle(box);
        return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow, s.borderColor].join(' '); }).join('|');
}"""
# The focused element: what it is, and its look.
_FOCUSED_JS = f"""() => {{
    const element = document.activeElement;
    if (!element || element === document.body) return null;
    return {{tag: element.tagName, role: element.getAttribute('role') || '',
             text: (element.closest('label') || element).innerText || '',
             testid: element.dataset.testid || '', look: ({_LOOK_JS})(element)}};
}}"""


def tab_until(page, wanted) -> dict:
    """Press Tab until the focused element answers wanted; return it."""
    for _ in range(MOST_TABS):
        page.keyboard.press("Tab")
        focused = page.evaluate(_FOCUSED_JS)
        if focused is not None and wanted(focused):
            return focused
    raise AssertionError(f"not reached in {MOST_TABS} presses of Tab")


def test_the_table_is_reached_opened_and_read_by_the_keyboard_alone(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/{QUERY}")
    expect(page.locator('[data-testid="aa-number-table"]')).to_have_count(0)
    focused = tab_until(page, lambda focused: focused["tag"] == "INPUT" and TOGGLE in focused["text"])
    page.evaluate("() => { window.aaToggle = document.activeElement; }")

    page.keyboard.press("Space")
    table = page.get_by_role("table", name=re.compile(r"^Attention weights, layer 2, head 5\."))
    expect(table).to_be_visible()
    wait_until_settled(page)
    expect(table.get_by_role("row")).to_have_count(8)  # the header and 7 query tokens
    expect(table.get_by_role("columnheader")).to_have_count(8)  # the corner and 7 key tokens
    expect(table.get_by_role("rowheader").first).to_have_text("[CLS]")
    cells = table.get_by_role("cell").all_inner_texts()
    assert len(cells) == 49 and all(re.fullmatch(r"0\.\d{4}|1\.0000", cell) for cell in cells), cells
    rows = [sum(float(cell) for cell in cells[start:start + 7]) for start in range(0, 49, 7)]
    assert all(abs(total - 1) < 5e-4 for total in rows), f"each query's row of weights sums to 1: {rows}"
    snapshot = table.aria_snapshot()
    assert 'rowheader "[CLS]"' in snapshot and 'columnheader "arrow"' in snapshot, snapshot
    found = serious_violations(page, "the one-head view with its table")
    assert not found, "\n".join(found)

    boxed = tab_until(page, lambda focused: focused["testid"] == "aa-number-table")
    assert boxed["role"] == "region", "the table's box, which scrolls, takes the focus"
    outline = page.locator('[data-testid="aa-number-table"]').evaluate("box => getComputedStyle(box).outlineStyle")
    assert outline != "none", "its focus is seen"
    assert page.evaluate("() => window.aaToggle.isConnected"), "the toggle stood through the rerun"
    assert page.evaluate(f"() => ({_LOOK_JS})(window.aaToggle)") != focused["look"], "the toggle's focus was seen"

    press_chart_key(page, "head")
    expect(page.get_by_role("table", name=re.compile(r"^Attention weights, layer 2, head 6\."))).to_be_visible()
    assert chart_input(page, "head").is_visible()


@pytest.mark.own_tab  # its websocket is watched
def test_the_toggle_reruns_its_table_alone_not_the_view_around_it(page, base_url):
    from playwright.sync_api import expect

    checkbox = ".st-key-table_chart-weights input[type='checkbox']"
    frames = opened_watched(page, f"{base_url}/{QUERY}", checkbox)
    toggle = page.locator(checkbox)
    # The attention controls beside the view, the chart's spec, and the view's line under the chart
    view = [b"Projection source", b"vega-lite", b"Drag the Layer and Head"]
    opened = b"".join(frame for frame in frames if frame)
    assert all(part in opened for part in view), [part for part in view if part not in opened]
    table = page.get_by_role("table", name=re.compile(r"^Attention weights, layer 2, head 5\."))

    frames.clear()
    act_and_measure(page, lambda: toggle.press("Space"))
    sent = answer(frames)
    assert b"Attention weights, layer 2, head 5" in sent, "the table was sent"
    assert not [part for part in view if part in sent], "the view was drawn again"
    expect(table).to_be_visible()

    frames.clear()
    act_and_measure(page, lambda: toggle.press("Space"))
    sent = answer(frames)
    assert not [part for part in view if part in sent], "the view was drawn again"
    expect(table).to_have_count(0)
    assert "head=5" in page.url and "table" not in page.url, "the link is the view's, not the table's"

