"""Faults, in a real Chromium: a tab closed mid-run, a dropped connection, two tabs, a server restart.

Through each of them the page recovers (Streamlit reconnects) and shows the view its URL
names. How each fault is made:

- a tab closed mid-run: a long new text is sent, and the tab is closed while the page shows the
  run under way (``data-test-script-state="running"``, set once the server has started it);
- a dropped connection: the page's websocket goes through Playwright (``page.route_web_socket``),
  which closes both of its ends; the browser is offline meanwhile, so it cannot reconnect at once;
- a server restart: the module's server (its own, on a fixed port, not conftest.py's base_url) is
  stopped and a new one starts on the same port (``streamlit_server(port=...)``) while the page is
  still open; the restart tests come last in the module.

What the server did is read from its own counters (``/_stcore/metrics``: websockets open, sessions
made, sessions resumed) and from its log. Widgets are found by key only (``.st-key-<key>``), wherever
the page puts them (the attention controls left the sidebar for a fragment next to the view). What a
view's chart picks itself (its record's on_chart in components/page/view_list.py: on the one-head view, layer and
head) is an input of the chart (components/charts/scrub.py), not a slider: a move there repaints in the browser,
then the chart's selection reruns the page.
"""

from __future__ import annotations

import re
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from components.page.view_list import view_named
from harness.browser import (
    TAB_TIMEOUT_MS,
    chart_input,
    load_page,
    open_tab,
    press_chart_key,
    press_slider_key,
    shapes,
    slider_thumb,
    wait_until_settled,
)
from harness.server import free_port, metrics, streamlit_server, wait_for
from tests.marks import BROWSER_TESTS

APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"
VIEW_TITLES = {"head": "One head", "heads": "All heads of a layer"}
# Long enough that the page's run takes seconds (a new forward pass over 512 tokens, a raster heatmap).
LONG_TEXT = " ".join(["a tab closed while the model reads this sentence"] * 60)
# A server that stopped, or a browser that was offline, is found again within a few pings (4 s apart at most).
RECONNECT_TIMEOUT_MS = 60_000

pytestmark = [*BROWSER_TESTS, pytest.mark.long]  # servers of its own, restarted: two minutes


@dataclass(frozen=True)
class View:
    """What a page should show, as its link says it: view, layer, head and text."""

    view: str
    layer: int
    head: int
    text: str

    def query(self) -> str:
        return "?" + "&".join([f"view={self.view}", f"layer={self.layer}", f"head={self.head}",
                               "text=" + self.text.replace(" ", "+")])

    def moved(self, **changes) -> View:
        return View(**{**self.__dict__, **changes})


@dataclass
class Server:
    """The module's `streamlit run`, on a fixed port: a test can stop it and start a new one there."""

    port: int
    logs: Path  # one log per start: streamlit0.log, streamlit1.log, ...
    starts: int = 0
    _running: ExitStack | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.logs / f"streamlit{self.starts - 1}.log"

    def start(self) -> None:
        self.starts += 1
        self._running = ExitStack()
        self._running.enter_context(streamlit_server(APP, log_path=self.log, port=self.port))

    def stop(self) -> None:
        self._running.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """This module's own server (not tests/browser/conftest.py's base_url), so that it can be restarted."""
    server = Server(free_port(), tmp_path_factory.mktemp("server"))
    server.start()
    yield server
    server.stop()


def grid_drawn(page):
    """The all-heads view's first chart (the grid of heads), once it is drawn."""
    return page.locator('[data-testid="stVegaLiteChart"]').first.locator("canvas, svg.marks").first


def app_state(page):
    return page.locator('[data-testid="stApp"]')


def control(page, view: str, name: str):
    """The input that shows the layer or the head: the chart's own where the view's chart picks it, else the slider."""
    return chart_input(page, name) if name in view_named(view).on_chart else slider_thumb(page, name)


def press_control(page, view: str, name: str, key: str = "ArrowRight") -> None:
    """Press a key on control(); return once the rerun it asked for has settled."""
    if name in view_named(view).on_chart:
        press_chart_key(page, name, key)
    else:
        press_slider_key(page, name, key)


def url_params(page) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlsplit(page.url).query).items()}


def expect_view(page, shown: View) -> None:
    """The page shows `shown` everywhere it says so: the URL, the controls, the titles, the shapes panel."""
    from playwright.sync_api import expect

    expect(page).to_have_url(re.compile(rf"[?&]head={shown.head}(&|$)"))
    params = url_params(page)
    assert {key: params.get(key) for key in ("view", "layer", "head", "text")} == {
        "view": None if shown.view == "head" else shown.view,  # the default view leaves the URL
        "layer": str(shown.layer), "head": str(shown.head), "text": shown.text}, page.url
    expect(page.locator(".st-key-view").get_by_role("radio", name=VIEW_TITLES[shown.view])).to_be_checked()
    expect(page.get_by_role("heading", level=1, name=VIEW_TITLES[shown.view])).to_be_visible()
    expect(control(page, shown.view, "layer")).to_have_value(str(shown.layer))
    expect(control(page, shown.view, "head")).to_have_value(str(shown.head))
    if shown.view == "head":  # its chart picks them, and its heading names them
        expect(page.get_by_role("heading", name=f"Layer {shown.layer}, head {shown.head}", exact=True)).to_be_visible()
    expect(page.locator(".st-key-text textarea")).to_have_value(shown.text)
    drawn_for = f"Layer {shown.layer}, head {shown.head}" if shown.view == "head" else \
        f"Every head of layer {shown.layer}"
    expect(page.get_by_role("heading", name=drawn_for, exact=True)).to_be_visible()
    tokens = len(shown.text.split()) + 2  # these texts are whole words of the vocabulary, and [CLS], [SEP]
    assert shapes(page)["weights"] == f"(1, {tokens}, {tokens})"
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def move_head(page, shown: View) -> View:
    """Press ArrowRight on the head's control(); return the view the page should now show, once the
    rerun the move asked for has been answered."""
    press_control(page, shown.view, "head")
    return shown.moved(head=shown.head + 1)


def expect_reconnected(page) -> None:
    """The page is connected again, shows no status (connecting, running) and has settled."""
    from playwright.sync_api import expect

    expect(app_state(page)).to_have_attribute("data-test-connection-state", "CONNECTED",
                                              timeout=RECONNECT_TIMEOUT_MS)
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=RECONNECT_TIMEOUT_MS)
    wait_until_settled(page)


def expect_disconnected(page) -> None:
    from playwright.sync_api import expect

    expect(app_state(page)).not_to_have_attribute("data-test-connection-state", "CONNECTED",
                                                  timeout=RECONNECT_TIMEOUT_MS)


def log_since(path: Path, offset: int) -> str:
    with open(path, "rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


def assert_no_errors_logged(text: str) -> None:
    for sign in ("Traceback", "Exception", "Error"):
        assert sign not in text, f"the server logged {sign!r}:\n{text[-4000:]}"


def test_closing_a_tab_mid_run_leaves_the_server_serving(browser, server):
    from playwright.sync_api import expect

    wait_for(lambda: metrics(server.url)["active"] == 0, "the module's earlier tabs to close")
    log_start = server.log.stat().st_size
    page = open_tab(browser)
    load_page(page, server.url)
    assert metrics(server.url)["active"] == 1

    text_area = page.locator(".st-key-text textarea")
    text_area.fill(LONG_TEXT)
    text_area.press("Control+Enter")  # a text area commits on Ctrl+Enter; the whole page reruns
    expect(app_state(page)).to_have_attribute("data-test-script-state", "running")
    page.close()  # the tab; its window (the context) stays open

    wait_for(lambda: metrics(server.url)["active"] == 0, "the closed tab's session to be let go", timeout_s=30)

    # Another tab of the same window opens a link afresh, and its controls work.
    shown = View("head", 1, 3, "fruit flies like a banana")
    tab = page.context.new_page()
    tab.set_default_timeout(TAB_TIMEOUT_MS)
    load_page(tab, f"{server.url}/{shown.query()}")
    expect_view(tab, shown)
    assert metrics(server.url)["active"] == 1
    expect_view(tab, move_head(tab, shown))

    tab.context.close()
    wait_for(lambda: metrics(server.url)["active"] == 0, "the second tab's session to be let go", timeout_s=30)
    assert_no_errors_logged(log_since(server.log, log_start))


def test_a_dropped_connection_resumes_its_session(browser, server):
    from playwright.sync_api import expect

    page = open_tab(browser)
    sockets = []  # (the page's end, the server's end) of every websocket the page opens
    page.route_web_socket(re.compile(r"/_stcore/stream$"),
                          lambda socket: sockets.append((socket, socket.connect_to_server())))
    shown = View("head", 2, 5, "time flies like a banana")
    load_page(page, f"{server.url}/{shown.query()}")
    wait_for(lambda: metrics(server.url)["active"] == 1, "the page's session")
    before = metrics(server.url)

    page.context.set_offline(True)
    for page_end, server_end in sockets:
        page_end.close()
        server_end.close()
    expect_disconnected(page)
    wait_for(lambda: metrics(server.url)["active"] == 0, "the server to see the websocket closed")
    expect(page.locator('[data-testid="stStatusWidget"]')).to_be_visible()  # "Connecting"

    page.context.set_offline(False)
    expect_reconnected(page)
    after = metrics(server.url)
    assert after == {**before, "reconnects": before["reconnects"] + 1}, "the page should get its own session back"
    expect_view(page, shown)

    # The resumed session keeps its state and follows the page's controls.
    expect_view(page, move_head(page, shown))
    page.context.close()


def test_two_tabs_of_one_window_keep_their_own_views(browser, server):
    from playwright.sync_api import expect

    single = open_tab(browser)
    grid = single.context.new_page()  # the same browser window, so the same cookies
    grid.set_default_timeout(TAB_TIMEOUT_MS)
    single_shown = View("head", 1, 2, "time flies like an arrow and fruit flies")
    grid_shown = View("heads", 3, 7, "fruit flies like a banana")
    load_page(single, f"{server.url}/{single_shown.query()}")
    load_page(grid, f"{server.url}/{grid_shown.query()}", drawn=grid_drawn)
    assert metrics(server.url)["active"] >= 2  # one session per tab (an earlier test's may still be closing)

    single.bring_to_front()
    single_shown = move_head(single, single_shown)
    expect_view(single, single_shown)
    grid.bring_to_front()
    expect_view(grid, grid_shown)

    press_control(grid, grid_shown.view, "layer")
    grid_shown = grid_shown.moved(layer=4)
    expect_view(grid, grid_shown)
    single.bring_to_front()
    expect_view(single, single_shown)
    expect(single.locator(".st-key-head_stage").get_by_text("Context", exact=True)).to_be_visible()
    single.context.close()


@dataclass(frozen=True)
class Restarted:
    page: object
    shown: View


@pytest.fixture(scope="module")
def restarted(browser, server):
    """A page left open while the module's server stops and a new one starts on its port (the module's last tests)."""
    shown = View("heads", 3, 4, "fruit flies like an arrow")
    page = open_tab(browser)
    load_page(page, f"{server.url}/{shown.query()}", drawn=grid_drawn)
    server.stop()
    expect_disconnected(page)  # the page is trying to reconnect
    server.start()
    yield Restarted(page, shown)
    page.context.close()


def test_a_restarted_server_takes_the_open_page_back(restarted, server):
    page, shown = restarted.page, restarted.shown
    expect_reconnected(page)
    # A new server holds none of the old sessions: the page got a new one.
    wait_for(lambda: metrics(server.url)["active"] == 1, "the page's websocket on the new server")
    assert metrics(server.url)["connects"] == 1
    expect_view(page, shown)
    assert_no_errors_logged(server.log.read_text(errors="replace"))


def test_a_restarted_server_takes_the_first_move(restarted):
    page, shown = restarted.page, restarted.shown
    expect_reconnected(page)
    moved = move_head(page, shown)  # the first move the new server's session gets; the page waits for its answer
    assert control(page, moved.view, "head").input_value() == str(moved.head), "the move was undone"
    expect_view(page, moved)
