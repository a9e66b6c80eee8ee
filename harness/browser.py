"""Helpers to drive a Streamlit page in a real Chromium: a browser, its pages, and "settled".

Used by the browser tests (tests/browser), the deploy tests (tests/deploy) and the benchmarks (bench/).
Selectors below were checked against the DOM of Streamlit 1.67:

- ``[data-testid="stApp"]`` carries ``data-test-script-state`` ("running" / "notRunning"),
- ``[data-testid="stStatusWidget"]`` shows while a run is under way (a "Stop" button), while
  (re)connecting, and for "File change. Rerun?" (not work; server.streamlit_server() runs without a file watcher),
- ``[data-testid="stAppViewContainer"]`` holds the header, the sidebar and the main area,
- a widget created with ``key="k"`` sits in an element container with the class ``st-key-k``
  (widgets only: ``st.altair_chart(..., key=...)`` gets no such class),
- a slider's thumb is a native ``<input type="range">`` (role slider, no aria-valuenow attribute).

"Settled" means: the script is not running, the websocket is connected, no element is stale, and
neither the DOM nor the websocket has moved for a quiet window. A fast run (the floor page's takes
~0.1 s) never shows "running" in the DOM, so pages made by new_page() also timestamp every
websocket message; a key press counts as answered once a message sent after it got a reply.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass

from components.page.lesson_steps import DRAWN_ATTRIBUTE, STEP_ATTRIBUTE
from components.page.viewport import COOKIE, SIZE_JS
from components.private_hooks import bound_input_name

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]
# V8's optimising compilers (Maglev, TurboFan) compile each new page's busiest functions afresh, on background
# threads. The tests open hundreds of pages that live seconds each and time nothing: with the baseline compilers
# alone the same JavaScript runs, and ten browser modules cost the renderer 15 % less CPU (61 s against 52). The
# bench keeps a reader's browser, optimising compilers and all.
BASELINE_JS = "--js-flags=--no-maglev --no-turbofan"
SETTLE_TIMEOUT_MS = 60_000
# A key press or click that reruns the page sends its message within ~0.1 s; after this long, none is coming.
NO_RERUN_GRACE_MS = 2_000
TAB_VIEWPORT = {"width": 1400, "height": 1000}
TAB_TIMEOUT_MS = 60_000

# Added to every page made by new_page(), before Streamlit's own code: timestamps each websocket
# message in both directions, so that "a rerun was asked for and answered" can be seen even when
# the run is too fast to ever show "running" in the DOM (React batches started+finished).
_PROBE_JS = """
(() => {
  if (window.__stProbe) return;
  // sends: when each message went out (the last 100: one or two per action); lastIn: the last reply.
  const probe = window.__stProbe = {sends: [], lastIn: -1};
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => { probe.lastIn = performance.now(); });
    }
    send(data) {
      probe.sends.push(performance.now());
      if (probe.sends.length > 100) probe.sends.shift();
      return super.send(data);
    }
  };
})();
"""

# Installs (or re-arms) one observer per page: every mutation under the app container stamps `last`.
_ARM_JS = """
() => {
  const root = document.querySelector('[data-testid="stAppViewContainer"]');
  if (!root) throw new Error('no Streamlit app container in this page');
  if (window.__settle) window.__settle.observer.disconnect();
  const app = document.querySelector('[data-testid="stApp"]');
  const s = {t0: performance.now(), last: performance.now(), mutations: 0, lastWhat: 'none', sawRun: false};
  s.observer = new MutationObserver(records => {
    s.last = performance.now();
    s.mutations += records.length;
    const r = records[records.length - 1];
    s.lastWhat = `${r.type} ${r.attributeName || ''} on ${r.target.nodeName}`;
    if (app.getAttribute('data-test-script-state') === 'running') s.sawRun = true;
  });
  s.observer.observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
  s.observer.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  window.__settle = s;
}
"""

# Resolves with the settle moment (ms after arming: the last DOM change) once the script is not
# running, the connection is up, nothing is stale, and neither the DOM nor the websocket has
# moved for quietMs. With expectRun, also only once the rerun the action caused has been answered:
# a message sent since arming got a reply (or, on a page without the probe, "running" was seen).
# An action that sends nothing within graceMs (opening a dropdown, a slider already at its end)
# caused no rerun, and then settling is enough.
_AWAIT_JS = """
([quietMs, timeoutMs, expectRun, graceMs]) => new Promise((resolve, reject) => {
  const s = window.__settle;
  const probe = window.__stProbe;
  const app = document.querySelector('[data-testid="stApp"]');
  const status = () => document.querySelector('[data-testid="stStatusWidget"]');
  const busy = () => app.getAttribute('data-test-script-state') === 'running'
    || app.getAttribute('data-test-connection-state') !== 'CONNECTED'
    || (status() !== null && !status().textContent.includes('File change'))
    || document.querySelector('[data-stale="true"]') !== null;
  const traffic = () => {
    if (!probe) return {last: s.t0, asked: s.sawRun, answered: s.sawRun, lastIn: null};
    const sends = probe.sends.filter(t => t >= s.t0);
    const lastIn = probe.lastIn >= s.t0 ? probe.lastIn : null;
    return {
      last: Math.max(s.t0, lastIn ?? s.t0, sends.length ? sends[sends.length - 1] : s.t0),
      asked: sends.length > 0,
      answered: sends.length > 0 && lastIn !== null && lastIn >= sends[0],
      lastIn,
    };
  };
  const check = () => {
    const now = performance.now();
    if (busy()) s.sawRun = true;
    const {last, asked, answered, lastIn} = traffic();
    const runDone = !expectRun || answered || (!asked && now - s.t0 >= graceMs);
    if (!busy() && runDone && now - s.last >= quietMs && now - last >= quietMs) {
      s.observer.disconnect();
      resolve({settledMs: s.last - s.t0, mutations: s.mutations,
               lastMessageMs: lastIn === null ? null : lastIn - s.t0});
      return;
    }
    if (now - s.t0 > timeoutMs) {
      s.observer.disconnect();
      reject(new Error(`page not settled after ${timeoutMs} ms: script ` +
        `${app.getAttribute('data-test-script-state')}, connection ` +
        `${app.getAttribute('data-test-connection-state')}, status widget ` +
        `${status() && JSON.stringify(status().innerText)}, stale elements ` +
        `${document.querySelectorAll('[data-stale="true"]').length}, rerun asked ${asked}, answered ${answered}, ` +
        `${s.mutations} DOM changes, the last ${Math.round(now - s.last)} ms ago (${s.lastWhat})`));
      return;
    }
    setTimeout(check, 20);
  };
  check();
})
"""


def chromium_path() -> str | None:
    """Debian's Chromium as .ci/run installs it: its headless shell (`apt-get install -y chromium-headless-shell`,
    the same Blink without the desktop browser around it, which drew the browser tests' pages on a third less CPU)
    if it is on PATH, else `chromium` (`apt-get install -y chromium`); None without either."""
    return shutil.which("chromium-headless-shell") or shutil.which("chromium")


# What a heatmap shows, as a string that changes with the data: the pixels of a canvas, else the
# colour of every SVG cell (vector heatmaps) or the data URL of every picture shown (raster heatmaps;
# pictures 0 px wide are not: the all-heads grid keeps those of the layers not shown).
_CHART_PIXELS_JS = """chart => {
  const canvas = chart.querySelector('canvas');
  if (canvas) return canvas.toDataURL();
  return [...chart.querySelectorAll('g.mark-rect.role-mark path, g.mark-image image:not([width="0"])')]
    .map(mark => mark.getAttribute('fill') || mark.getAttribute('href') || '').join(' ');
}"""


def chart_pixels(page, chart=None) -> str:
    """What a chart (a locator; by default the weights heatmap) shows now, once it is drawn (compare two calls to
    see a change)."""
    chart = weights_chart(page) if chart is None else chart
    chart.locator("canvas, svg.marks").first.wait_for()
    return chart.evaluate(_CHART_PIXELS_JS)


def launch_chromium(playwright, optimised_js: bool = True, **options):
    """A headless Chromium from the system package (Playwright's own download is not available here).

    optimised_js=False: for the tests, without V8's optimising compilers (BASELINE_JS)."""
    path = chromium_path()
    if path is None:
        raise RuntimeError("Chromium not found: no `chromium` on PATH. Install it with `apt-get install -y chromium`")
    args = CHROMIUM_ARGS if optimised_js else [*CHROMIUM_ARGS, BASELINE_JS]
    return playwright.chromium.launch(executable_path=path, args=args, **options)


class SharedChromium:
    """One Chromium for the browser tests of a test process (a pytest-xdist worker), launched when a test first asks
    for it, with the windows its tests keep (by size; tests/browser/conftest.py): a launch costs Playwright's driver and
    Chromium a second of CPU, and a new window's first page a second and a half more than a kept tab's (its renderer
    compiles Streamlit's scripts), once a process instead of once a module.

    While it is open, Playwright's sync API keeps its event loop marked as running in this thread, where
    asyncio.run() then refuses to start: code that runs asyncio itself calls close() first, and the next test that
    asks for the browser launches it again."""

    def __init__(self) -> None:
        self._playwright = None
        self._browser = None
        self.windows: dict = {}  # (width, height) -> a window kept from test to test, with a .context

    def browser(self):
        """The process's Chromium, launched now if it is not open."""
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._browser = launch_chromium(self._playwright, optimised_js=False)
        return self._browser

    def close_other_windows(self) -> None:
        """Close every window but the kept ones: what a module's tests left open (a failed test's own window) must
        not go on running its page beside the next module's tests."""
        if self._browser is not None:
            kept = [window.context for window in self.windows.values()]
            for context in self._browser.contexts:
                if context not in kept:
                    context.close()

    def close(self) -> None:
        """Close the browser, its windows and Playwright's driver."""
        if self._browser is not None:
            self.windows.clear()
            self._browser.close()
            self._playwright.stop()
            self._browser = self._playwright = None


def new_page(browser, **context_options):
    """A page in a fresh context (so a fresh Streamlit session) that watches its websocket.

    Close it with page.context.close().
    """
    return _watching_context(browser, **context_options).new_page()


def new_window(browser, **context_options):
    """A fresh browser context (a window: its own cookies and cache) whose tabs watch their websocket, as new_page()'s
    do; at 1400×1000 (the page's two columns side by side), downloads accepted. Close it with .close()."""
    return _watching_context(browser, **{"viewport": TAB_VIEWPORT, "accept_downloads": True, **context_options})


def _watching_context(browser, **context_options):
    """A fresh browser context whose every page timestamps its websocket's messages (_PROBE_JS)."""
    context = browser.new_context(**context_options)
    context.add_init_script(_PROBE_JS)
    return context


def tab_in(window):
    """A new tab of window (a Streamlit session of its own), with 60 s for every wait, as a busy 2-core machine can
    take seconds to rerun the page."""
    page = window.new_page()
    page.set_default_timeout(TAB_TIMEOUT_MS)
    return page


def open_tab(browser, **context_options):
    """A tab in a window of its own (new_window, tab_in): a browser that has never seen the page.

    Close it with page.context.close().
    """
    return tab_in(new_window(browser, **context_options))


def open_session(browser, url: str):
    """A fresh browser context (own cookies, so its own session) with the page loaded and settled."""
    page = open_tab(browser)
    load_page(page, url)
    return page


def weights_chart(page):
    """The weights heatmap: the first chart described as "Attention weights" (its aria-label; a canvas has no text)."""
    return page.locator('[data-testid="stVegaLiteChart"][aria-label^="Attention weights"]').first


# Whether the page has reported the size it has now (components/page/viewport.py's script writes each size it
# reports to its cookie): until it has, a rerun for that size may still be coming.
SIZED_JS = f"""() => {{
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (!main) return false;
  const size = ({SIZE_JS})(main);
  return document.cookie.split('; ').includes(`{COOKIE}=${{size.main}}x${{size.window}}x${{size.height}}`);
}}"""


def load_page(page, url: str, drawn=None) -> None:
    """Go to url; wait until drawn(page) (default: the weights heatmap) is drawn, the page has measured its window
    (so no rerun for another size is still to come: a loaded machine can answer that one after a quiet moment) and
    nothing moves any more."""
    page.goto(url)
    (drawn or _weights_drawn)(page).wait_for()
    wait_until_sized(page)
    wait_until_settled(page)


# Which charts an action builds anew: Streamlit embeds a chart again when its spec changed, or its place in the
# page's tree did (Vega compiles it and lays it out from scratch, a new canvas or SVG), and swaps the numbers of one
# kept (the same canvas).
_CHART_DRAWINGS = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg.marks'
_MARK_CHARTS_JS = f"""() => {{ for (const drawing of document.querySelectorAll('{_CHART_DRAWINGS}'))
  drawing.dataset.seen = '1'; }}"""
_CHARTS_BUILT_JS = f"""() => [...document.querySelectorAll('{_CHART_DRAWINGS}')]
  .filter(drawing => !drawing.dataset.seen).length"""


def mark_charts(page) -> None:
    """Mark every chart drawing on the page now: charts_built(page) then counts those drawn since."""
    page.evaluate(_MARK_CHARTS_JS)


def charts_built(page) -> int:
    """How many chart drawings are on the page that mark_charts(page) did not mark: the charts built anew since."""
    return page.evaluate(_CHARTS_BUILT_JS)


def wait_until_sized(page) -> None:
    """Wait until the page has reported the size it has now (a resized window reports it 150 ms after)."""
    page.wait_for_function(SIZED_JS)


def shapes(page) -> dict[str, str]:
    """The shapes panel as {step: shape}, e.g. {"Q": "(1, 7, 32)", ...}."""
    items = page.locator('[data-testid="shapes-panel"] li').evaluate_all(
        "items => items.map(item => [...item.querySelectorAll('code')].map(code => code.innerText.trim()))")
    return {codes[0]: codes[1] for codes in items}


def messages_sent(page) -> int:
    """How many messages the page has sent its server so far: a page made by new_page() counts them (_PROBE_JS)."""
    return page.evaluate("() => window.__stProbe.sends.length")


# A predicate of the page (for page.wait_for_function): the lesson's step and its neighbours are drawn (the body's
# data-lesson-drawn, components/views/parts/lesson_nav.js). The neighbours come in a run the page asks for once it
# has been still, as a reader reads the step before the next press; the bench waits on it before each press of a
# lesson case. Every step has its container on the page, drawn or not: their count is the lesson's.
LESSON_STEADY = f"""() => {{
  const step = Number(document.body.getAttribute('data-{STEP_ATTRIBUTE}'));
  const drawn = document.body.getAttribute('data-{DRAWN_ATTRIBUTE}');
  if (!step || drawn === null) return false;
  const count = document.querySelectorAll('[class*="st-key-lesson_step_"]').length;
  const near = drawn.split(' ').map(Number);
  return [step - 1, step, step + 1].every(other => other < 1 || other > count || near.includes(other));
}}"""


def wait_for_lesson_steps(page, *steps: int) -> None:
    """Wait until the lesson's steps are drawn (the body's data-lesson-drawn, components/views/parts/lesson_nav.js):
    the neighbours of the step shown come in a run of their own once the page has been still a while; then until
    the page has settled."""
    for step in steps:
        page.locator(f'body[data-{DRAWN_ATTRIBUTE}~="{step}"]').wait_for(state="attached")
    wait_until_settled(page)


def wait_until_settled(page, quiet_ms: int = 300, timeout_ms: int = SETTLE_TIMEOUT_MS) -> float:
    """Wait until the app is idle and nothing has moved for quiet_ms; return ms since the call.

    The figure returned is the moment of the last DOM change (the quiet window is not counted).
    """
    page.evaluate(_ARM_JS)
    return _await_settled(page, quiet_ms, timeout_ms, expect_run=False).settled_ms


def slider_thumb(page, key: str):
    """The keyboard-focusable thumb of the slider created with key=key."""
    return page.locator(f".st-key-{key} [data-testid='stSlider'] input[type='range']")


def chart_input(page, name: str):
    """One of a chart's own range inputs (components/charts/scrub.py), "layer" or "head": Vega-Lite names each
    input after its selection and field (private_hooks.bound_input_name)."""
    return page.locator(f'.vega-bindings input[type="range"][name="{bound_input_name(name)}"]').first


def chart_input_readout(page, name: str):
    """The number Vega writes beside a chart's own input (the input itself has no aria-valuetext)."""
    return page.locator(readout_selector(name)).first


def readout_selector(name: str) -> str:
    """The CSS selector of chart_input_readout's number, for a script in the page."""
    return (f'.vega-bindings label:has(> input[type="range"][name="{bound_input_name(name)}"])'
            ' > span:not(.vega-bind-name)')


# Chromium's range thumb is 16 px wide: value v sits half a thumb in from the ends of the input's box.
_RANGE_THUMB_PX = 16


def chart_input_point(page, name: str, value: int) -> tuple[float, float]:
    """Where on the screen the thumb of a chart's own input stands at value: for page.mouse drags."""
    thumb = chart_input(page, name)
    thumb.scroll_into_view_if_needed()
    low, high = (float(thumb.get_attribute(end)) for end in ("min", "max"))
    box = thumb.bounding_box()
    track = box["width"] - _RANGE_THUMB_PX
    fraction = (value - low) / (high - low) if high > low else 0.0
    return box["x"] + _RANGE_THUMB_PX / 2 + fraction * track, box["y"] + box["height"] / 2


@dataclass(frozen=True)
class Timing:
    """Milliseconds from just before an action: the page's last DOM change, the server's last message."""

    settled_ms: float
    last_message_ms: float | None  # None when the page does not watch its websocket (not from new_page())


def act_and_time(page, action, quiet_ms: int = 300, timeout_ms: int = SETTLE_TIMEOUT_MS,
                 grace_ms: int = NO_RERUN_GRACE_MS) -> Timing:
    """Call action() (a click, a key press) and wait for the rerun it causes to finish.

    An action that sends nothing to the server within grace_ms caused no rerun: then only the
    DOM must settle. On a page not made by new_page(), a rerun is recognised only when it lasts
    long enough to show "running"; faster ones are waited for as if there were none.
    """
    page.evaluate(_ARM_JS)
    action()
    return _await_settled(page, quiet_ms, timeout_ms, expect_run=True, grace_ms=grace_ms)


def act_and_measure(page, action, **settle) -> float:
    """Call action(), wait for the rerun it causes to finish; return ms until the page settled."""
    return act_and_time(page, action, **settle).settled_ms


def press_and_measure(page, locator, key: str, **settle) -> float:
    """Focus locator, press key, wait for the rerun it causes to finish; return ms from key press to settled."""
    locator.focus()
    return act_and_measure(page, lambda: locator.press(key), **settle)


def press_slider_key(page, key: str, press: str = "ArrowRight", **settle) -> float:
    """Press a key on the slider with key=key; return ms from the key press until the page settled."""
    return press_and_measure(page, slider_thumb(page, key), press, **settle)


def press_chart_key(page, name: str, press: str = "ArrowRight", **settle) -> float:
    """Press a key on a chart's own layer or head input; return ms until the rerun that follows has settled."""
    return press_and_measure(page, chart_input(page, name), press, **settle)


def expect_head(page, head: int) -> None:
    """The one-head view shows head: its heatmap's own input, its URL and its heading."""
    from playwright.sync_api import expect

    expect(chart_input_readout(page, "head")).to_have_text(str(head))
    expect(page).to_have_url(re.compile(rf"[?&]head={head}(&|$)" if head else r"^(?!.*[?&]head=)"))
    expect(page.get_by_role("heading", name=re.compile(rf"Layer \d+, head {head}$"))).to_be_visible()


def open_expander(page, title: str):
    """Open the expander whose summary reads title and wait until it stands open; return the expander.

    Its opening is a CSS transition of some 400 ms; a click meanwhile (on a loaded machine) can have its pointer
    go up on another element than it went down on, which is no click at all: a button pressed then is lost."""
    expander = page.locator('[data-testid="stExpander"]').filter(has=page.locator("summary", has_text=title)).first
    expander.locator("summary").click()
    expander.locator("details[open]").wait_for()
    page.wait_for_function("box => box.getAnimations({subtree: true}).length === 0", arg=expander.element_handle())
    return expander


def move_head_to(page, head: int) -> None:
    """Press ArrowRight on the one-head chart's head input until the view shows head."""
    while int(chart_input_readout(page, "head").inner_text()) < head:
        press_chart_key(page, "head")
    expect_head(page, head)


def time_slider_key(page, key: str, press: str = "ArrowRight", **settle) -> Timing:
    """Like press_slider_key, with the server's part of the time as well."""
    thumb = slider_thumb(page, key)
    thumb.focus()
    return act_and_time(page, lambda: thumb.press(press), **settle)


def _weights_drawn(page):
    return weights_chart(page).locator("canvas, svg.marks").first


def _await_settled(page, quiet_ms: int, timeout_ms: int, expect_run: bool,
                   grace_ms: int = NO_RERUN_GRACE_MS) -> Timing:
    result = page.evaluate(_AWAIT_JS, [quiet_ms, timeout_ms, expect_run, grace_ms])
    return Timing(float(result["settledMs"]), result["lastMessageMs"])


REPAINT_TIMEOUT_S = 15.0  # the browser repaints on its own time; a busy 2-core machine can take seconds


def wait_for_change(read: Callable[[], object], before: object, timeout_s: float = REPAINT_TIMEOUT_S
                    ) -> tuple[object, float]:
    """read() once it differs from before (or at the timeout, unchanged), and the seconds that took: for what a
    chart shows after a move drawn in the browser, which no event announces."""
    start = time.perf_counter()
    while (now := read()) == before and time.perf_counter() - start < timeout_s:
        time.sleep(0.01)
    return now, time.perf_counter() - start


def wait_until_still(read: Callable[[], object], now: object, still_s: float = 0.2,
                     timeout_s: float = REPAINT_TIMEOUT_S) -> object:
    """read() once it has stayed as it is for still_s (or at the timeout), starting from what it read now: a chart
    drawn in the browser may show a frame on the way to what it settles on (a key pressed four times)."""
    start = since = time.perf_counter()
    while time.perf_counter() - since < still_s and time.perf_counter() - start < timeout_s:
        time.sleep(0.05)
        if (later := read()) != now:
            now, since = later, time.perf_counter()
    return now


class HeldReplies:
    """The page's websocket through Playwright: what the page sends goes on to the server at once, and
    what the server sends is held here while held() is on, then passed on by release()."""

    def __init__(self) -> None:
        self._page_end = None
        self.held: list | None = None

    @classmethod
    def on(cls, page) -> HeldReplies:
        """Replies held between page and its server: call it before the page is opened."""
        replies = cls()
        page.route_web_socket(re.compile(r"/_stcore/stream$"), replies.route)
        return replies

    def press(self, page, name: str, key: str = "ArrowRight"):
        """Hold the server's replies from now on, then press key on the chart's own input `name` (layer, head,
        query), as a reader does; return the input. Whatever the page draws now, it drew by itself."""
        self.hold()
        target = chart_input(page, name)
        target.focus()
        target.press(key)
        return target

    def route(self, socket) -> None:
        self._page_end = socket
        socket.connect_to_server().on_message(self._from_server)  # no longer forwarded on its own

    def hold(self) -> None:
        self.held = []

    def wait_until_held(self, page, timeout_s: float = REPAINT_TIMEOUT_S,
                        until: Callable[[list], bool] = bool) -> bool:
        """Whether the server has sent something since hold() (or what until(held replies) asks for), waiting for it
        up to timeout_s."""
        deadline = time.monotonic() + timeout_s
        while not until(self.held or []) and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        return until(self.held or [])

    def release(self) -> None:
        held, self.held = self.held, None
        for message in held:
            self._page_end.send(message)

    def _from_server(self, message) -> None:
        if self.held is None:
            self._page_end.send(message)
        else:
            self.held.append(message)
