"""One Streamlit server for all the browser tests that use it, and one Chromium per module (a module that needs a
server of its own, with other settings or to stop it, defines its own base_url).

The server is pytest-xdist's controller's, one for all its workers (tests/conftest.py), instead of one a module,
which saves the app's cold start (torch, transformers, the model) some thirty times over; under `-n 0`, a session
fixture's. Each test opens its own page, so its own Streamlit session, and the workers' sessions meet in one
server as a class's do. Chromium is the worker's too (the session fixture `chromium`, tests/conftest.py), and so are its
windows: the deploy tests, which run asyncio and Playwright of their own, close it, and the next browser test launches
it again.

The `page` fixture's tab is a window's (one per window size), and it is handed from test to test and from module to
module: going to a new address ends the old page's Streamlit session, and the next test opens its own. A tab kept
costs Chromium a third less CPU a page than a new one (its renderer has already compiled Streamlit's scripts), and
the suite is CPU-bound. Like a learner's tabs, the tests share the window's cache and cookies (the window's size is
known when a page opens, so it is drawn once, not for the default size and then again; components/page/viewport.py).
A test that adds to the tab what must not outlive it (a listener, a route, an init script) is marked `own_tab` and
gets a tab of its own in the same window; a test about a browser that has never seen the page opens a window of its
own (harness.browser.open_tab), which it closes, and which the module's end closes if a failure left it open."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from harness.browser import TAB_VIEWPORT, new_window, tab_in
from harness.server import APP, SHARED_SERVER_KEY, served_url, streamlit_server


@pytest.fixture(scope="session")
def base_url(request, tmp_path_factory):
    """Under pytest-xdist, the server the controller started for every worker (tests/conftest.py); in a process of
    its own (`-n 0`), its own, whose output stays in pytest's temporary folder (basetemp/server0/streamlit.log)."""
    shared = getattr(request.config, "workerinput", {}).get(SHARED_SERVER_KEY)
    if shared:
        yield served_url(shared)
        return
    with streamlit_server(APP, log_path=tmp_path_factory.mktemp("server") / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="module")
def gpt2_url(tmp_path_factory, tiny_gpt2_checkpoint):
    """A server of the module's own that offers the tiny GPT-2 (tests/conftest.py) as a configured folder beside
    the bundled BERT, as a deployer would."""
    with streamlit_server(APP, env={"ATTENTION_ANATOMY_MODEL_DIRS": str(tiny_gpt2_checkpoint)},
                          log_path=tmp_path_factory.mktemp("server") / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser(chromium):
    from playwright.sync_api import expect

    expect.set_options(timeout=15_000)  # a busy 2-core machine can take seconds to rerun the page
    yield chromium.browser()
    chromium.close_other_windows()


@dataclass
class Window:
    """A kept browser window, and the tab the last test left in it."""

    context: object  # playwright's BrowserContext
    spare: object | None = None  # a Page showing about:blank

    def tab(self):
        """The tab the last test left, else a new one."""
        tab, self.spare = self.spare or tab_in(self.context), None
        return tab

    def hand_on(self, tab) -> None:
        """Keep tab for the next test, blank: its page's session ends with its websocket. A tab that a failed test
        left unable to move on is closed instead."""
        try:
            tab.goto("about:blank")
        except Exception:  # noqa: BLE001 (whatever kept it from moving on, it is not handed on)
            tab.close()
        else:
            self.spare = tab


def _window(windows: dict, browser, module) -> Window:
    """The module's window at its VIEWPORT, if it sets one, from the kept windows (by width and height)."""
    viewport = getattr(module, "VIEWPORT", None) or TAB_VIEWPORT
    size = (viewport["width"], viewport["height"])
    if size not in windows:
        windows[size] = Window(new_window(browser, viewport=viewport))
    return windows[size]


@pytest.fixture
def page(chromium, browser, request):
    """The module's window's tab, at its VIEWPORT, blank: the test opens a fresh Streamlit session in it.

    A test marked own_tab (one that adds to its tab what must not outlive it: a listener, a route, an init script)
    gets a new tab in the same window instead, closed after it."""
    window = _window(chromium.windows, browser, request.module)
    own = request.node.get_closest_marker("own_tab") is not None
    tab = tab_in(window.context) if own else window.tab()
    yield tab
    if tab.is_closed():
        return
    if own:
        tab.close()
    else:
        window.hand_on(tab)
