"""One Streamlit server and one Chromium per browser-test module."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.browser import launch_chromium, open_tab
from harness.server import streamlit_server

APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    # The server's output stays in pytest's temporary folder (basetemp/server0/streamlit.log).
    with streamlit_server(APP, log_path=tmp_path_factory.mktemp("server") / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=15_000)  # a busy 2-core machine can take seconds to rerun the page
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, request):
    """A fresh tab (harness.browser.open_tab), at the test module's VIEWPORT if it sets one."""
    viewport = getattr(request.module, "VIEWPORT", None)
    page = open_tab(browser, **({"viewport": viewport} if viewport else {}))
    yield page
    page.context.close()
