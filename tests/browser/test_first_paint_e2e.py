"""A new server's first page in a real Chromium: its frame and a loading status at once, then the page.

The module starts servers of its own, new processes (the other browser tests share one, warm by the time they
run). The first two see what the App does as it starts (components/server/app_start.py): it imports torch
before any page asks for it, and opens a browser tab on its page unless it is headless; the others, on a server
opened at once, see what a reader sees while the model loads (components/page/first_paint.py). Nothing is timed:
what is checked is what the page shows, in which order.

That server imports torch as a cold laptop or a woken Community Cloud app does, in seconds: on a quick machine with
torch's files in the disk cache, the server's own import was done and the model loaded a second after the page
opened, before the browser had drawn the sidebar's text box, and the status the test looks for beside it was gone
(the test failed three runs of five on a fresh machine). torch is imported as ever, SLOW_TORCH_S later.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from components.page.first_paint import WARM_UP_KEY
from harness.browser import weights_chart
from harness.server import port_of, server_pid, streamlit_server
from tests.browser.conftest import APP
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

VIEWPORT = {"width": 1280, "height": 720}
WARM_START_S = 120  # for the server's own import of torch, on a busy machine
LOADING = "Loading the model (torch, transformers)…"
SLOW_TORCH_S = 8
# On the server's path before its packages: Python imports it as it starts (sitecustomize). The first import of
# torch, by whichever thread, waits SLOW_TORCH_S while holding torch's own module lock, so the page's own import of
# torch waits too. It waits in the loader, not in find_spec: Python runs the finders under its global import lock,
# and a sleep there held back every import of every thread, the page's first frame among them.
_SLOW_TORCH = f"""import importlib.machinery, sys, time


class SlowLoader:
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        time.sleep({SLOW_TORCH_S})
        self.loader.exec_module(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


class SlowTorch:
    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = SlowLoader(spec.loader)
        return spec


sys.meta_path.insert(0, SlowTorch())
"""
# True at a moment when the loading status and the sidebar's view selector and text box are on the page at once.
SIDEBAR_WHILE_LOADING = """loading => {
    const sidebar = document.querySelector('[data-testid="stSidebar"]');
    const status = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stExpander"], '
                                                 + '[data-testid="stMain"] summary')]
        .some(node => node.textContent.includes(loading));
    return status && sidebar !== null && sidebar.querySelector('.st-key-view input[type="radio"]') !== null
        && sidebar.querySelector('.st-key-text textarea') !== null;
}"""

# True at a moment when the loading status and the hidden chart's container are on the page at once, the
# container and all in it unseen.
WARM_UP_HIDDEN_WHILE_LOADING = """([loading, key]) => {
    const status = [...document.querySelectorAll('[data-testid="stMain"] summary')]
        .some(node => node.textContent.includes(loading));
    const container = document.querySelector(`.st-key-${key}`);
    return status && container !== null && getComputedStyle(container).visibility === 'hidden'
        && [...container.querySelectorAll('*')].every(node => getComputedStyle(node).visibility === 'hidden');
}"""


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    """A new server whose import of torch takes SLOW_TORCH_S longer (the module's docstring says why)."""
    folder = tmp_path_factory.mktemp("server")
    (folder / "sitecustomize.py").write_text(_SLOW_TORCH)
    path = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    with streamlit_server(APP, env={"PYTHONPATH": path}, log_path=folder / "streamlit.log") as url:
        yield url


def torch_loaded(pid: int) -> bool:
    """Whether torch's library is mapped into the process: imported, by whichever thread."""
    return "libtorch_cpu" in Path(f"/proc/{pid}/maps").read_text()


def test_a_new_server_imports_torch_before_any_page_asks_for_it(tmp_path):
    with streamlit_server(APP, log_path=tmp_path / "streamlit.log") as url:
        pid = server_pid(port_of(url))
        deadline = time.monotonic() + WARM_START_S
        while not torch_loaded(pid):
            assert time.monotonic() < deadline, f"the server had not imported torch {WARM_START_S} s after it answered"
            time.sleep(0.2)


def test_a_server_that_is_not_headless_opens_a_tab_on_its_page(tmp_path):
    opened = tmp_path / "opened"  # what the browser was asked to open: the server asks through Python's webbrowser
    browser = tmp_path / "browser"  # which BROWSER names
    browser.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser.chmod(0o755)
    (tmp_path / ".streamlit").mkdir()  # a home whose Streamlit has asked for its email, as a laptop's after a first run
    (tmp_path / ".streamlit" / "credentials.toml").write_text('[general]\nemail = ""\n')
    env = {"BROWSER": str(browser), "HOME": str(tmp_path)}
    with streamlit_server(APP, env=env, log_path=tmp_path / "streamlit.log", headless=False) as url:
        deadline = time.monotonic() + 30
        # The shell makes the file (>>) before echo writes into it: the line is there once it ends
        while not (opened.exists() and opened.read_text().endswith("\n")):
            assert time.monotonic() < deadline, "the server asked for no browser tab"
            time.sleep(0.1)
        assert opened.read_text().split() == [url], "the address it listens on (harness.server: 127.0.0.1)"


def test_a_new_server_shows_its_titles_and_what_loads_then_the_heatmap_and_the_status_goes(page, base_url):
    from playwright.sync_api import expect

    page.goto(base_url)
    status = page.get_by_text(LOADING)
    expect(status).to_be_visible()  # drawn before the heavy imports: on a new process they take seconds
    expect(page.locator('[data-testid="stSidebar"] h1')).to_have_text("Attention Anatomy")
    expect(page.locator('[data-testid="stMain"] h1')).to_have_text("Attention Anatomy")
    # The sidebar's controls are on the page while the status still is: drawn before torch, not after the model.
    page.wait_for_function(SIDEBAR_WHILE_LOADING, arg=LOADING, timeout=120_000)
    # The chart that starts the browser's chart library meanwhile is on the page with the status, and never seen.
    # Whether Vega draws it before the model is loaded is a race (a warmed server loads it in a second or two: a
    # busy browser has not drawn it yet), so its container is checked, at a moment when the status is shown.
    page.wait_for_function(WARM_UP_HIDDEN_WHILE_LOADING, arg=[LOADING, WARM_UP_KEY], timeout=120_000)

    weights_chart(page).locator("canvas, svg.marks").first.wait_for(timeout=120_000)
    expect(status).to_have_count(0)
    expect(page.locator(f".st-key-{WARM_UP_KEY}")).to_have_count(0)
    expect(page.locator('[data-testid="stMain"] h1').first).to_have_text("One head")
    expect(page.locator(".st-key-text textarea")).to_have_value("time flies like an arrow")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_once_loaded_a_new_session_shows_no_loading_status(page, base_url):
    from playwright.sync_api import expect

    page.goto(base_url)
    weights_chart(page).locator("canvas, svg.marks").first.wait_for()
    expect(page.locator('[data-testid="stSidebar"] h1')).to_have_text("Attention Anatomy")
    expect(page.get_by_text(LOADING)).to_have_count(0)
    expect(page.locator('[data-testid="stMain"] h1').first).to_have_text("One head")
