"""One Streamlit server for all the browser tests that use it, and one Chromium per module (a module that needs a
server of its own, with other settings or to stop it, defines its own base_url).

The server is a session fixture: each pytest-xdist worker starts one, instead of one a module, which saves the app's
cold start (torch, transformers, the model) some thirty times over. Each test opens its own tab, so its own
Streamlit session. Chromium stays a module's: Playwright's sync API keeps an event loop running while it is open,
and the deploy tests that may follow in the same worker run asyncio and Playwright of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.browser import launch_chromium, open_tab
from harness.server import streamlit_server

APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"


@pytest.fixture(scope="session")
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
