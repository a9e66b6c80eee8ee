"""A Hub model's first use in a real Chromium: progress while it downloads, the bundled model meanwhile.

The server is a real `streamlit run` whose HF_ENDPOINT is a fake Hub on loopback (tests/fake_hub.py)
serving a small BERT slowly, holding its weights part-way until the test releases them; HF_HOME is a
fresh temporary folder, so nothing is cached. The tests run in file order on one server: first a
download that breaks off, then one that completes.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from attention.models.download import FILES
from attention.models.loading import ALLOWED_MODELS_ENV
from harness.browser import chart_input, chart_pixels
from harness.server import streamlit_server
from tests.fake_hub import FakeHub, save_hub_bert
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"
REPO = "tiny-org/tiny-bert"
HELD_AT = 12_000_000  # bytes of the weights sent before the fake Hub waits for the test (past the first 10 MB chunk)
BUNDLED_CAPTION = "all-MiniLM-L6-v2: 6 layers × 12 heads"
HUB_CAPTION = f"{REPO}: 2 layers × 4 heads"
# A server's first page imports torch and loads the bundled model: on a busy 2-core machine, most of a minute.
FIRST_PAGE_TIMEOUT_MS = 90_000


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    folder = save_hub_bert(tmp_path_factory.mktemp("hub-bert"))
    with FakeHub(REPO, folder, bytes_per_second=8e6, hold_at=HELD_AT) as hub:
        yield hub


@pytest.fixture(scope="module")
def hub_url(hub, tmp_path_factory):
    """A server that downloads from the fake Hub into an empty cache, with REPO on the allow-list."""
    env = {"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0", "HF_HOME": str(tmp_path_factory.mktemp("hf-home")),
           ALLOWED_MODELS_ENV: REPO}
    with streamlit_server(APP, env=env, log_path=tmp_path_factory.mktemp("server") / "streamlit.log") as url:
        yield url


def progress_bar(page):
    return page.locator('[data-testid="stSidebar"] [data-testid="stProgress"]')


def assert_no_exception(page) -> None:
    boxes = page.locator('[data-testid="stException"]')
    assert boxes.count() == 0, boxes.first.inner_text()


def test_a_broken_off_download_is_a_notice_and_the_bundled_model_stays(page, hub, hub_url):
    from playwright.sync_api import expect

    hub.interrupt_after(2_000_000)  # mid-weights; then the Hub answers 503
    try:
        page.goto(f"{hub_url}/?model={REPO}")
        notice = page.locator('[data-testid="stAlert"]').filter(has_text="stopped after")
        expect(notice).to_contain_text("Showing the bundled model instead", timeout=FIRST_PAGE_TIMEOUT_MS)
        expect(notice).to_contain_text("choose the model again")
    finally:
        hub.heal()
    expect(page.locator(".st-key-model [role='combobox']")).to_have_value("all-MiniLM-L6-v2")
    expect(page.get_by_text(BUNDLED_CAPTION)).to_be_visible()
    expect(progress_bar(page)).to_have_count(0)
    assert chart_pixels(page)
    assert_no_exception(page)


def test_a_hub_model_downloads_while_the_bundled_model_stays_usable(page, hub, hub_url):
    from playwright.sync_api import expect

    total_mb = sum(hub.size(file) for file in FILES if file in hub.files) / 1e6
    page.goto(f"{hub_url}/?model={REPO}")

    # Held past the first 10 MB chunk: the bar shows bytes inside the weights file, and the note.
    bar = progress_bar(page)
    expect(bar).to_contain_text(re.compile(rf"Downloading {REPO}: 1\d\.\d of {total_mb:.1f} MB"),
                                timeout=FIRST_PAGE_TIMEOUT_MS)
    expect(page.get_by_text("Showing the bundled model until it is ready.")).to_be_visible()
    expect(page.get_by_text(BUNDLED_CAPTION)).to_be_visible()

    # Meanwhile the bundled model's page works: the heatmap's head input redraws it, and the page follows.
    before = chart_pixels(page)
    head = chart_input(page, "head")
    head.focus()
    head.press("ArrowRight")
    expect(head).to_have_value("1")
    deadline = time.monotonic() + 30
    while chart_pixels(page) == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert chart_pixels(page) != before, "the heatmap did not follow its head input during the download"
    # The repaint is the browser's own; that the server ran the move shows in the URL and the heading.
    expect(page).to_have_url(re.compile(r"[?&]head=1(&|$)"))
    expect(page.get_by_role("heading", name="Layer 0, head 1")).to_be_visible()
    expect(bar).to_be_visible()  # still downloading: the fake Hub holds the rest
    assert_no_exception(page)

    hub.release()
    expect(page.get_by_text(HUB_CAPTION)).to_be_visible(timeout=60_000)
    expect(progress_bar(page)).to_have_count(0)
    expect(page.locator(".st-key-model [role='combobox']")).to_have_value(REPO)
    assert chart_pixels(page)
    assert_no_exception(page)
