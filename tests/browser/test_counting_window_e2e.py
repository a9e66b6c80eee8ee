"""The counting lab in Chromium: the window size moves on the maps' own input, drawn by the browser alone; Stop still
stops a training (the lab runs as the whole page, not a fragment, for it).

The page's messages to the server are held while the window moves (Playwright routes the websocket), so the server
cannot have run the script: what changes on the maps meanwhile, the browser drew from the data it had.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from attention.labs.counting import CountingConfig, example_windows, letters
from components.charts.counting_maps import WIN
from components.private_hooks import bound_input_name
from harness.browser import (
    chart_input,
    chart_input_readout,
    chart_pixels,
    load_page,
    open_tab,
    slider_thumb,
    wait_for_change,
    wait_until_settled,
    wait_until_still,
)
from tests.browser.frames import HeldMessages
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

MAPS = f'[data-testid="stVegaLiteChart"]:has(input[name="{bound_input_name(WIN)}"])'
OPEN_TIMEOUT_MS = 180_000  # the first counting lab of a server imports torch's training parts and draws every window


def maps(page):
    return page.locator(MAPS).first


def open_lab(page, base_url: str, query: str = "") -> None:
    page.set_default_timeout(OPEN_TIMEOUT_MS)
    load_page(page, f"{base_url}/?view=counting{query}", drawn=lambda tab: tab.locator(f"{MAPS} canvas"))


def window_line(win_size: int) -> str:
    """The line above the maps naming the example window the page shows at that size (sample 0)."""
    config = replace(CountingConfig(), win_size=win_size)
    return "Window: " + " ".join(letters(example_windows(config, 1, seed=0))[0])


@pytest.mark.own_tab  # its websocket is watched or held
def test_the_window_moves_on_the_maps_with_no_rerun_and_the_page_follows_after(browser, page, base_url):
    from playwright.sync_api import expect

    messages = HeldMessages(page)
    open_lab(page, base_url)
    expect(chart_input_readout(page, "win_size")).to_have_text("10")
    expect(page.get_by_text(window_line(10), exact=True)).to_be_visible()
    before = chart_pixels(page, maps(page))

    messages.holding = True
    window = chart_input(page, "win_size")
    window.focus()
    for _ in range(4):
        window.press("ArrowRight")
    expect(chart_input_readout(page, "win_size")).to_have_text("14")
    moved, _ = wait_for_change(lambda: chart_pixels(page, maps(page)), before)
    moved = wait_until_still(lambda: chart_pixels(page, maps(page)), moved)  # not a frame on the way to 14
    assert moved != before, "the maps were redrawn at the new window size"
    assert "win_size=" not in page.url, "no script ran: the URL has not moved yet"
    expect(page.get_by_text(window_line(10), exact=True)).to_be_visible()  # nor the line the script writes
    messages.wait_for_held(page)
    assert messages.held, "the move was reported to the server (held here)"

    messages.release()
    expect(page).to_have_url(re.compile(r"[?&]win_size=14(&|$)"))
    expect(page.get_by_text(window_line(14), exact=True)).to_be_visible()
    assert chart_pixels(page, maps(page)) == moved, "the rerun after the move leaves the maps as the browser drew them"

    linked = open_tab(browser)
    try:
        open_lab(linked, base_url, "&win_size=14")
        expect(chart_input_readout(linked, "win_size")).to_have_text("14")
        assert chart_pixels(linked, maps(linked)) == moved, "a window moved to is drawn as a link draws it"
    finally:
        linked.context.close()


def test_stop_stops_a_training_where_it_is_and_the_maps_show_what_it_learned(page, base_url):
    from playwright.sync_api import expect

    open_lab(page, base_url)
    steps = slider_thumb(page, "count_steps")
    steps.focus()
    steps.press("End")  # the longest run the page offers: it cannot end before Stop
    wait_until_settled(page)
    page.locator(".st-key-count_train button").click()
    expect(page.locator('[data-testid="stProgress"]').get_by_text(re.compile(r"^Step \d+ of 3000"))).to_be_visible()
    page.locator(".st-key-count_stop button").first.click()
    expect(page.get_by_text(re.compile(r"^Stopped at step \d+ of 3000"))).to_be_visible()
    expect(page.get_by_text("the server's limit for one training")).to_have_count(0)  # Stop, not the time limit
    wait_until_settled(page)
    expect(page.get_by_text("What the head learned", exact=True)).to_be_visible()
    expect(chart_input_readout(page, "win_size")).to_have_text("10")
