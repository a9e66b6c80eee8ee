"""The page in a real Chromium: the chart's inputs, sliders, links, hostile input and the CSV, end to end.

One server for all browser tests, a fresh tab (so a fresh Streamlit session) per test (tests/browser/conftest.py).
How each thing is found (checked against the Streamlit 1.67 DOM):

- widgets by key: the class ``st-key-<key>`` on their element container,
- a slider's thumb: the native ``input[type=range]`` inside it (value and aria-valuetext; no aria-valuenow),
- the one-head view's layer and head: the heatmap's own range inputs, ``.vega-bindings input[name="head_head"]``
  (components/charts/scrub.py), with the number Vega writes beside each,
- the weights heatmap: the chart whose aria-label (its Vega-Lite description) starts with
  "Attention weights" (a canvas has no text to find it by),
- the shapes panel: ``[data-testid="shapes-panel"]``, one list item per step (st.html, like the chips),
- the token chips: ``[data-testid="token-chips"]``, which st.html puts in the page itself (no iframe, no shadow DOM).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from harness.browser import (
    act_and_measure,
    chart_input,
    chart_input_readout,
    chart_pixels,
    load_page,
    press_chart_key,
    press_slider_key,
    shapes,
    slider_thumb,
)
from tests.marks import BROWSER_TESTS

SCREENSHOT = "/tmp/e2e-shot.png"
CSV_HEADER = ["query_index", "query_token", "key_index", "key_token", "score", "masked_score", "weight",
              "alpha_fx_norm"]
HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"

pytestmark = BROWSER_TESTS

_CHIP_TOKENS_JS = "chips => [...chips.querySelectorAll('.aa-chip')].map(chip => chip.lastChild.textContent)"


@pytest.fixture
def page(page):
    """conftest's tab, noting every alert()/confirm() the page tries to open while the test runs (the listener goes
    with it: the tab is handed on to the next test)."""
    page.dialogs = []

    def dismiss(dialog) -> None:
        page.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    yield page
    page.remove_listener("dialog", dismiss)


def open_page(page, base_url: str, query: str = "") -> None:
    """Load the page and wait until the weights heatmap is drawn and nothing moves any more."""
    load_page(page, f"{base_url}/{query}")


def chip_tokens(page) -> list[str]:
    return page.locator('[data-testid="token-chips"]').evaluate(_CHIP_TOKENS_JS)


def assert_no_exception(page) -> None:
    boxes = page.locator('[data-testid="stException"]')
    assert boxes.count() == 0, boxes.first.inner_text()


def test_head_input_redraws_the_heatmap(page, base_url):
    from playwright.sync_api import expect

    open_page(page, base_url)
    before_pixels, before_shapes = chart_pixels(page), shapes(page)
    assert before_pixels
    assert before_shapes["weights"] == "(1, 7, 7)"

    press_chart_key(page, "head", "ArrowRight")

    expect(chart_input(page, "head")).to_have_value("1")
    expect(page).to_have_url(re.compile(r"[?&]head=1(&|$)"))
    expect(page.get_by_role("heading", name="Layer 0, head 1")).to_be_visible()
    assert chart_pixels(page) != before_pixels
    assert shapes(page) == before_shapes  # another head of the same model: the same shapes
    assert_no_exception(page)
    page.screenshot(path=SCREENSHOT, full_page=True)


def test_shapes_panel_follows_head_dim(page, base_url):
    from playwright.sync_api import expect

    open_page(page, base_url)
    assert shapes(page)["Q"] == "(1, 7, 32)"

    random_source = page.locator(".st-key-source button").filter(has_text="random")
    act_and_measure(page, random_source.click)
    expect(random_source).to_have_attribute("aria-checked", "true")
    expect(slider_thumb(page, "head_dim")).to_have_value("32")

    press_slider_key(page, "head_dim", "ArrowLeft")

    expect(slider_thumb(page, "head_dim")).to_have_value("31")
    after = shapes(page)
    assert after["Q"] == after["K"] == after["V"] == after["context"] == "(1, 7, 31)"
    assert after["Q split"] == "(1, 12, 7, 31)"  # 384 // 31 = 12 heads
    assert after["concat"] == "(1, 7, 372)"  # 12 · 31
    assert after["weights"] == "(1, 7, 7)"
    expect(page).to_have_url(re.compile(r"[?&]head_dim=31(&|$)"))
    assert_no_exception(page)


def test_link_reopens_the_same_view(page, base_url):
    from playwright.sync_api import expect

    open_page(page, base_url, "?text=fruit+flies+like+a+banana&layer=2&head=5&scaling=linear")

    for name, value in (("layer", "2"), ("head", "5")):
        expect(chart_input(page, name)).to_have_value(value)
        expect(chart_input_readout(page, name)).to_have_text(value)
    expect(page.get_by_role("heading", name="Layer 2, head 5", exact=True)).to_be_visible()
    expect(page.locator(".st-key-text textarea")).to_have_value("fruit flies like a banana")
    expect(page.locator(".st-key-scaling button[aria-checked='true']")).to_have_text("d_k")
    expect(page.get_by_role("heading", name="Layer 2, head 5")).to_be_visible()
    assert chip_tokens(page) == ["[CLS]", "fruit", "flies", "like", "a", "banana", "[SEP]"]
    assert page.locator('[data-testid="stAlert"]').count() == 0
    assert_no_exception(page)


def test_bad_link_shows_notices_and_still_draws(page, base_url):
    from playwright.sync_api import expect

    open_page(page, base_url, "?layer=abc&head=-1&head_dim=100000&scaling=foo&model=../../etc/passwd")

    alerts = page.locator('[data-testid="stAlert"]')
    for notice in ("layer=abc was ignored", "head=-1 was ignored", "scaling=foo was ignored",
                   "model=../../etc/passwd was ignored", "head_dim=100000 does not exist"):
        expect(alerts.filter(has_text=notice)).to_be_visible()
    expect(chart_input(page, "layer")).to_have_value("0")
    expect(chart_input(page, "head")).to_have_value("0")
    expect(page.locator(".st-key-model [role='combobox']")).to_have_value("all-MiniLM-L6-v2")
    expect(page.get_by_role("heading", name="Layer 0, head 0")).to_be_visible()
    assert chart_pixels(page)
    assert_no_exception(page)


def test_hostile_text_is_shown_as_text(page, base_url):
    open_page(page, base_url)
    text_area = page.locator(".st-key-text textarea")
    text_area.fill(HOSTILE)

    # A text area commits on Ctrl+Enter (or on blur), then the page reruns.
    act_and_measure(page, lambda: text_area.press("Control+Enter"))

    tokens = chip_tokens(page)
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    for piece in ("<", "script", "alert", ">", "/"):
        assert piece in tokens
    assert page.locator('img[src="x"]').count() == 0
    injected = page.evaluate(
        "() => [...document.querySelectorAll('script')].filter(s => s.textContent.includes('alert')).length")
    assert injected == 0
    assert page.dialogs == []
    assert_no_exception(page)


def test_a_charts_picture_downloads_from_its_download_button(page, base_url):
    """Under the head's chart, "Download chart" opens on PNG and SVG; PNG, clicked, saves the chart drawn on the
    server."""
    open_page(page, base_url)
    opener = page.locator('[data-testid="stPopover"]').filter(has_text="Download chart").first
    picture = page.locator('[data-testid="stDownloadButton"] button').filter(has_text="PNG")
    assert not picture.count(), "the two buttons are drawn only when it opens"
    opener.locator("button").first.click()
    with page.expect_download() as download_info:
        picture.first.click()
    download = download_info.value
    assert download.suggested_filename.endswith(".png")
    assert Path(download.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert_no_exception(page)


def test_csv_download_has_one_row_per_pair(page, base_url):
    open_page(page, base_url)
    count = len(chip_tokens(page))

    with page.expect_download() as download_info:
        page.locator(".st-key-csv button").click()
    download = download_info.value
    text = Path(download.path()).read_text(encoding="utf-8")

    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == CSV_HEADER
    assert len(rows) - 1 == count * count == 49
    assert download.suggested_filename.endswith(".csv")
    assert_no_exception(page)
