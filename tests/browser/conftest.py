"""One Streamlit server for all the browser tests that use it, and one Chromium per module (a module that needs a
server of its own, with other settings or to stop it, defines its own base_url).

The server is a session fixture: each pytest-xdist worker starts one, instead of one a module, which saves the app's
cold start (torch, transformers, the model) some thirty times over. Each test opens its own tab, so its own
Streamlit session. Chromium stays a module's: Playwright's sync API keeps an event loop running while it is open,
and the deploy tests that may follow in the same worker run asyncio and Playwright of their own.

The `page` fixture's tabs are a module's window's (one per window size): like a learner's tabs, they share its cache
(the page's scripts are not fetched anew each test) and its cookies (the window's size is known when a tab opens, so
the page is drawn once, not for the default size and then again; components/page/viewport.py). A test about a
browser that has never seen the page opens a window of its own (harness.browser.open_tab)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.browser import TAB_VIEWPORT, launch_chromium, new_window, tab_in
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


@pytest.fixture(scope="module")
def windows(browser):
    """The module's browser windows, by (width, height), opened as its tests ask for them."""
    opened = {}
    yield opened
    for window in opened.values():
        window.close()


@pytest.fixture
def page(windows, browser, request):
    """A fresh tab (so a fresh Streamlit session) in the module's window at its VIEWPORT, if it sets one."""
    viewport = getattr(request.module, "VIEWPORT", None) or TAB_VIEWPORT
    size = (viewport["width"], viewport["height"])
    if size not in windows:
        windows[size] = new_window(browser, viewport=viewport)
    page = tab_in(windows[size])
    yield page
    page.close()
