"""How long the page takes to answer a move, in a real Chromium, against the cheapest possible page.

Each case opens a fresh session (a new browser context) on a link, waits for the page to settle,
then makes the same move again and again with the keyboard (a slider's arrow key, Space on a pill,
Enter on a button or a dropdown's option, Ctrl+Enter in the text area) and times each key press until
the page has settled: no script running, no DOM change for 300 ms, the quiet window itself not counted
(harness/browser.py). The floor is bench/floor_app.py, one slider and one line of text: what every
Streamlit page pays for a move (the debounce, the websocket round trip, a script run, React's redraw).
The floor's slider is moved right after each move of a case, so that on a shared machine whose load
comes and goes each case is compared with a floor measured under the same load.

Widgets are found by their key only (the `.st-key-<key>` class), never by their place on the page.
Used by python -m bench, which starts the servers and prints the figures against their targets.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from components.page.first_paint import WARM_UP_KEY
from components.page.viewport import KEY as VIEWPORT_KEY
from components.private_hooks import ForwardMsg, bound_input_name
from harness.browser import (
    LESSON_STEADY,
    Timing,
    act_and_time,
    charts_built,
    mark_charts,
    new_page,
    wait_until_settled,
    wait_until_sized,
)

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "streamlit_app.py"
FLOOR_APP = ROOT / "bench" / "floor_app.py"
CHART_FLOOR_APP = ROOT / "bench" / "chart_floor_app.py"  # the floor, and one heatmap whose numbers change
TIMEOUT_MS = 120_000  # a first load that trains or ranks heads takes a while on a busy machine
# A chart of the page's own, not the hidden one a new server draws while it loads the model (first_paint.py).
CHART_DRAWN = ", ".join(f'[data-testid="stVegaLiteChart"]:not(.st-key-{WARM_UP_KEY} *) {tag}'
                        for tag in ("svg", "canvas", "img"))

# 30 words that are one WordPiece each: 32 tokens with [CLS] and [SEP].
TEXT_32 = ("the students read a long story about a small town by the sea where every house had a blue door "
           "and the old man sat in his chair all day")
WORDS_32 = TEXT_32.split()
# Another 32 tokens, for the second text of the compare view.
TEXT_32_B = ("a young girl walked to the old school by the river where every child had a red book and the "
             "teacher sat at her desk all morning")
# The switch view guesses the word behind the one [MASK]: 32 tokens, [MASK] one of them.
TEXT_32_MASK = TEXT_32.replace("the sea", "the [MASK]")
# 128 tokens: where bertviz's lines get slow (its issue tracker says so).
TEXT_128 = " ".join([TEXT_32] * 4 + ["the"] * 6)
# About 720 tokens, cut by the page to the 512 BERT reads.
TEXT_512 = ("the quick brown fox jumps over the lazy dog while the students read a long story "
            "about a small town by the sea. ") * 30


def text_of_tokens(tokenizer, tokens: int, source: str = TEXT_512) -> str:
    """The start of source that tokenizer cuts into `tokens` tokens (GPT-2's adds no special tokens)."""
    return tokenizer.decode(tokenizer(source)["input_ids"][:tokens])


def new_texts(count: int) -> list[str]:
    """Texts of 32 tokens that the page has not seen: TEXT_32's words rotated by 1, 2, … places."""
    return [" ".join(WORDS_32[shift:] + WORDS_32[:shift]) for shift in range(1, count + 1)]


@dataclass(frozen=True)
class Move:
    """One timed key press on the widget found by selector; setup keys (no rerun) and fill come first."""

    selector: str
    key: str
    setup_keys: tuple[str, ...] = ()  # e.g. ArrowDown to open a dropdown on the next option
    fill: str | None = None  # typed into the widget first (a text area applies it on Ctrl+Enter)


def slider(key: str, presses: list[str]) -> list[Move]:
    return [Move(f".st-key-{key} [data-testid='stSlider'] input[type='range']", press) for press in presses]


SWITCH_TOGGLES = ".st-key-switch_heads button"  # the switch view's head toggles (views/parts/head_toggles.py)


def switch_toggles(layer: int) -> list[Move]:
    """The switch view's heads 0 → 9 of one layer switched off in turn (each press one head more)."""
    return [Move(f"{SWITCH_TOGGLES}[data-layer='{layer}'][data-head='{head}']", "Space") for head in range(10)]


def chart_input(name: str, presses: list[str]) -> list[Move]:
    """Presses on a chart's own layer, head or query input (charts/scrub.py, charts/neuron_chart.py), the scaling
    lab's τ (views/lab.py) or the counting lab's window size (charts/counting_maps.py)."""
    return [Move(f'.vega-bindings input[type="range"][name="{bound_input_name(name)}"]', press) for press in presses]


RIGHT = ["ArrowRight"] * 11  # 0 -> 11: every move a value not seen before
THERE_AND_BACK = ["ArrowRight"] * 5 + ["ArrowLeft"] * 5  # the bundled model has 6 layers: 0 -> 5 -> 0
RIGHT_10 = ["ArrowRight"] * 10


FORWARD_REFERENCE = "forward + floor"  # a Case.reference: the bundled model's bare forward pass, plus the floor


@dataclass(frozen=True)
class Case:
    name: str
    group: str  # what --only selects
    moved: str  # what the case moves, in words, for the table
    query: dict[str, str]
    moves: list[Move]
    target: float | None  # the median's largest ratio to its reference, None: reported only
    ready: str = CHART_DRAWN  # what shows that the page has drawn (a CSS selector)
    reference: str = "floor"  # or FORWARD_REFERENCE for a new text (the bare forward is measured in process)
    # Drawn in the browser: timed from the key press to the heatmap's repainted frame, the rerun that
    # follows (URL, shapes, proof) timed apart, and the bytes the server sends counted.
    in_browser: bool = False
    open_with: tuple[str, ...] = ()  # what to click once the page is open (a stage; a class started), before the moves
    picture: str = "chart"  # in_browser: what a move must change, a key of PICTURES
    # A regular expression the page's text must match before the moves: the model it shows (a model that loads in
    # the background is shown once loaded, the bundled one meanwhile)
    shows: str | None = None
    # Moves made after the case's own, back over what they drew (each value, option or text once more), timed apart:
    # what a press costs with nothing new to compute, where the first presses include the computing.
    again: tuple[Move, ...] = ()
    # What a reader waits for between presses, untimed, before each move: a JavaScript predicate of the page, then
    # the page settled (harness.browser.LESSON_STEADY: the lesson's neighbours, drawn once the page has been still).
    steady: str | None = None


# The floor's slider, moved once after every move of a case: right, left, right, … (0 <-> 1, no end to hit).
FLOOR_MOVES = slider("x", ["ArrowRight", "ArrowLeft"])
FLOOR_READY = ".st-key-x"
# The app's script that measures the page (components/page/viewport.py), by its key: its pages report their size.
MEASURES_ITSELF = f".st-key-{VIEWPORT_KEY}"


def app_cases(switch_model: str, gpt2_model: str = "", gpt2_text: str = "") -> list[Case]:
    """The app's cases; switch_model is a local checkpoint with a masked-language-model head, gpt2_model a GPT-2 of
    the bundled model's shape (6 layers, 12 heads) and gpt2_text a text of 32 tokens for its tokenizer."""
    text = {"text": TEXT_32}
    gpt2 = {"text": gpt2_text, "model": gpt2_model}
    lesson_next = Move(".st-key-lesson_next button", "Enter")
    lesson_prev = Move(".st-key-lesson_prev button", "Enter")
    return [
        Case("head change, 32 tokens, one head", "slider", "the chart's `head` input 0 → 11", text,
             chart_input("head", RIGHT), 1.2, in_browser=True),
        Case("layer change, 32 tokens, one head", "slider", "the chart's `layer` input 0 → 5 → 0", text,
             chart_input("layer", THERE_AND_BACK), 1.2, in_browser=True),
        Case("head change, 512 tokens, one head", "slider", "the chart's `head` input 0 → 11", {"text": TEXT_512},
             chart_input("head", RIGHT), 2.0, in_browser=True),
        # One layer of a 512-token text is sent (scrub.send_plan's budgets): its layer input asks for a rerun.
        Case("layer change, 512 tokens, one head (a rerun)", "slider", "the chart's `layer` input 0 → 5 → 0",
             {"text": TEXT_512}, chart_input("layer", THERE_AND_BACK), None),
        Case("head change, 32 tokens, one head, GPT-2", "slider", "the chart's `head` input 0 → 11", gpt2,
             chart_input("head", RIGHT), 1.2, in_browser=True),
        Case("layer change, 32 tokens, one head, GPT-2", "slider", "the chart's `layer` input 0 → 5 → 0", gpt2,
             chart_input("layer", THERE_AND_BACK), 1.2, in_browser=True),
        # What a head moves, α·‖f(x)‖ : the Moves stage, and the weights weighted by value norm.
        Case("head change, 32 tokens, one head, what moves", "slider", "the chart's `head` input 0 → 11", text,
             chart_input("head", RIGHT), 1.2, in_browser=True,
             open_with=(".st-key-head_stage button >> text=Moves",)),
        Case("head change, 32 tokens, one head, weighted by value norm", "slider", "the chart's `head` input 0 → 11",
             {**text, "value_norm": "1"}, chart_input("head", RIGHT), 1.2, in_browser=True),
        Case("head change, 128 tokens, drawn as lines", "slider", "the chart's `head` input 0 → 11",
             {"text": TEXT_128}, chart_input("head", RIGHT), 2.0, in_browser=True,
             open_with=(".st-key-head_stage button >> text=Lines",)),
        Case("all heads of a layer, 32 tokens", "views", "the chart's `layer` input 0 → 5 → 0",
             {**text, "view": "heads"}, chart_input("layer", THERE_AND_BACK), 1.5, in_browser=True),
        Case("neuron view, 32 tokens", "views", "the chart's `query` input 1 → 12", {**text, "view": "neuron"},
             chart_input("query", RIGHT), 1.5, in_browser=True),
        # The step is switched in the browser at the press (its neighbours drawn): its frame, the rerun after.
        Case("guided lesson, 32 tokens", "views", "`lesson_next` ×6, `lesson_prev` ×6 (Enter)",
             {**text, "view": "lesson"}, [lesson_next] * 6 + [lesson_prev] * 6, 2.0, in_browser=True,
             picture="lesson step", steady=LESSON_STEADY),
        # τ is the random-softmax chart's own input there (every τ sent): drawn in the browser, the rerun after.
        Case("scaling lab, 32 tokens", "views", "the chart's `temperature` τ input 1.00 → 1.50",
             {**text, "view": "lab"}, chart_input("temperature", RIGHT_10), 2.0, in_browser=True),
        Case("two texts side by side, 32 + 32 tokens", "views", "the chart's `head` input 0 → 11",
             {**text, "text_b": TEXT_32_B, "view": "compare"}, chart_input("head", RIGHT), 1.5, in_browser=True),
        # The window is the maps' own input there (every size of the untrained head sent): drawn in the browser.
        Case("counting letters (untrained)", "views", "the maps' `win_size` window input 10 → 20",
             {"view": "counting"}, chart_input("win_size", RIGHT_10), 2.0, in_browser=True),
        # The numbers are fetched from the App's route at the press and shown by the toggles' script: drawn in the
        # browser, the rerun (and, for the sentence embedding, its chart) after.
        Case("switching heads off, 32 tokens", "views", "the toggles of layer 0, heads 0 → 9 (Space)",
             {"text": TEXT_32_MASK, "view": "switch", "model": switch_model}, switch_toggles(0), 2.0,
             ready=SWITCH_TOGGLES, in_browser=True, picture="switch numbers"),
        # The bundled model has no masked-language-model head: its switch view moves the sentence embedding.
        Case("switching heads off, sentence embedding", "views",
             "the toggles of layer 0, heads 0 → 9 (Space), bundled model", {**text, "view": "switch"},
             switch_toggles(0), 2.0, ready=SWITCH_TOGGLES, in_browser=True, picture="switch numbers"),
        # A head of the last layer: the pair runs from that layer's kept input, one layer of six.
        Case("switching heads off, sentence embedding, last layer", "views",
             "the toggles of layer 5, heads 0 → 9 (Space), bundled model", {**text, "view": "switch"},
             switch_toggles(5), 2.0, ready=SWITCH_TOGGLES, in_browser=True, picture="switch numbers"),
        Case("new text typed, 32 tokens, one head", "text", "`text` area, a new text (Ctrl+Enter)", text,
             [Move(".st-key-text textarea", "Control+Enter", fill=new) for new in new_texts(10)], 3.0,
             reference=FORWARD_REFERENCE),
    ]


@dataclass
class Result:
    case: Case
    timings: list[Timing] = field(default_factory=list)
    floor: list[Timing] = field(default_factory=list)  # the floor's move after each of the case's moves
    tokens: int | None = None  # token chips on the page after opening it (None: none shown)
    error: str | None = None
    painted_ms: list[float] = field(default_factory=list)  # in_browser: key press -> the repainted frame
    repaints: list[int] = field(default_factory=list)  # in_browser: canvas repaints after the first, per move
    bytes_in: list[int] = field(default_factory=list)  # in_browser: bytes the server sent for each move
    open_bytes: int | None = None  # in_browser: bytes the server sent to open the page
    built: list[int] = field(default_factory=list)  # charts each move built anew (browser.charts_built)
    charts_redrawn: list[int] = field(default_factory=list)  # charts each move redrew (ChartsRedrawn)
    again: list[Timing] = field(default_factory=list)  # the case's moves back over what they drew (Case.again)

    def settled(self) -> list[float]:
        return [timing.settled_ms for timing in self.timings]

    def answered(self) -> list[float]:
        """What the case is judged on: the repainted frame when drawn in the browser, else the settled page."""
        return self.painted_ms if self.case.in_browser else self.settled()

    @property
    def median_ms(self) -> float:
        return statistics.median(self.answered())

    @property
    def floor_ms(self) -> float:
        return statistics.median(timing.settled_ms for timing in self.floor)

    @property
    def again_ms(self) -> float | None:
        """The median of the presses back over what the case drew, None when it makes none."""
        return statistics.median(timing.settled_ms for timing in self.again) if self.again else None

    @property
    def server_ms(self) -> float:
        """The median time of the server's last message: the rest of the median is the browser drawing."""
        return statistics.median(timing.last_message_ms or 0.0 for timing in self.timings)


def open_page(browser, url: str, ready: str, received: list[int] | None = None, charts: list[int] | None = None):
    """A fresh session on url, drawn and settled; the size of every websocket frame the server sends is
    appended to received, and whether each redraws a chart (ChartsRedrawn) to charts, when given."""
    page = new_page(browser, viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    if received is not None:
        page.add_init_script(PAINT_PROBE_JS)
        page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: received.append(len(frame))))
    if charts is not None:
        redraws = ChartsRedrawn()
        page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: charts.append(redraws(frame))))
    page.goto(url)
    page.locator(ready).first.wait_for()
    wait_until_settled(page, timeout_ms=TIMEOUT_MS)
    # The app's page reports its size, and the run that follows draws its charts at that width: on a busy machine
    # after a quiet moment, so that a case's first press timed that run's redraws with its own. The floors' pages
    # measure nothing.
    if page.locator(MEASURES_ITSELF).count():
        wait_until_sized(page)
        wait_until_settled(page, timeout_ms=TIMEOUT_MS)
    return page


class ChartsRedrawn:
    """Which of a page's charts each of the server's websocket frames changes: a chart element at a place in the
    page (its delta path) whose content differs from what stood there, or where none stood. Streamlit sends a
    message the browser has seen before by its hash alone (ref_hash), and the browser draws it from its own copy: a
    chart whose numbers go back to earlier ones is redrawn all the same, and one sent again unchanged is not. What a
    run did not send again is gone at its end, as the browser clears it: of a fragment's run, what the fragments it
    drew had drawn before."""

    def __init__(self) -> None:
        self._charts: set[str] = set()  # the hashes of the chart messages sent in full
        # delta path -> (the content of the chart standing there, or None for another element; its fragment)
        self._standing: dict[tuple[int, ...], tuple[str | None, str]] = {}
        self._sent: set[tuple[int, ...]] = set()  # the places the run under way has sent
        self._fragments: set[str] = set()  # the fragments it has sent elements of

    def __call__(self, frame: bytes | str) -> int:
        """1 when the frame redraws a chart, else 0."""
        if isinstance(frame, str):
            return 0
        message = ForwardMsg()
        message.ParseFromString(frame)
        kind = message.WhichOneof("type")
        if kind == "new_session":  # a run begins
            self._sent, self._fragments = set(), set()
        elif kind == "script_finished":
            self._clear(message.script_finished)
        if kind == "ref_hash":
            content, fragment = message.ref_hash, ""
            if content not in self._charts:
                content = None
        elif kind == "delta":
            content, fragment = None, message.delta.fragment_id
            if (message.delta.WhichOneof("type") == "new_element"
                    and message.delta.new_element.WhichOneof("type") == "vega_lite_chart"):
                content = message.hash or hashlib.blake2b(message.delta.new_element.SerializeToString()).hexdigest()
                self._charts.add(content)
        else:
            return 0
        place = tuple(message.metadata.delta_path)
        before = self._standing.get(place, (None, ""))
        fragment = fragment or before[1]  # a message sent by its hash names no fragment: the place's own stands
        self._standing[place] = (content, fragment)
        self._sent.add(place)
        self._fragments.add(fragment)
        return int(content is not None and content != before[0])

    def _clear(self, status: int) -> None:
        """At a run's end, what it did not send again is gone: all of it after the page's run, what its fragments
        had drawn after a fragment's; nothing after a run cut short for another."""
        if status == ForwardMsg.FINISHED_SUCCESSFULLY:
            gone = set(self._standing) - self._sent
        elif status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
            gone = {place for place, (_, fragment) in self._standing.items()
                    if place not in self._sent and fragment in self._fragments}
        else:
            return
        for place in gone:
            del self._standing[place]


# Before the page's own code: notes when a canvas is drawn on (Vega's canvas renderer fills paths and
# draws images), and the animation frame after the first draw since arming, when the new pixels show.
# A MutationObserver does not see a canvas repaint.
PAINT_PROBE_JS = """
(() => {
  if (window.__paint) return;
  const paint = window.__paint = {armedAt: Infinity, frameAt: null, draws: []};
  const note = () => {
    const now = performance.now();
    if (now < paint.armedAt) return;
    if (paint.draws.length < 100000) paint.draws.push(now);
    if (paint.frameAt === null) {
      paint.frameAt = -1;
      requestAnimationFrame(() => { paint.frameAt = performance.now(); });
    }
  };
  const context = CanvasRenderingContext2D.prototype;
  for (const name of ['fill', 'fillRect', 'drawImage']) {
    const native = context[name];
    context[name] = function (...args) { note(); return native.apply(this, args); };
  }
  // A chart drawn as SVG repaints by changing its marks' elements.
  new MutationObserver(records => {
    if (records.some(r => r.target.closest && r.target.closest('svg.marks'))) note();
  }).observe(document, {subtree: true, childList: true, attributes: true});
  // The lesson shows another step when the body's data-lesson-step changes (components/views/parts/lesson_nav.py),
  // the switch view other numbers when their data-heads-off does (components/views/parts/head_toggles.py): they
  // are on the screen once the next frame is laid out and painted, after the frame's own work.
  new MutationObserver(() => {
    const now = performance.now();
    if (now < paint.armedAt || paint.frameAt !== null) return;
    paint.draws.push(now);
    paint.frameAt = -1;
    requestAnimationFrame(() => setTimeout(() => { paint.frameAt = performance.now(); }, 0));
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-lesson-step', 'data-heads-off']});
})();
"""
# What the chart with its own inputs shows: its canvas, or its SVG marks. Every chart has a .vega-bindings box,
# empty where it binds no input: on the scaling lab the first chart (the variance) has none.
CHART_PICTURE_JS = """() => {
  const chart = document.querySelector('.vega-embed:has(> .vega-bindings input)');
  const canvas = chart.querySelector('canvas');
  return canvas ? canvas.toDataURL() : chart.querySelector('svg.marks').innerHTML;
}"""
# What a move drawn in the browser must change: the chart with inputs of its own, or the lesson's step shown.
PICTURES = {"chart": CHART_PICTURE_JS, "lesson step": "() => document.body.dataset.lessonStep",
            "switch numbers": "() => document.querySelector('[data-heads-off]').dataset.headsOff"}
ARM_PAINT_JS = "() => { Object.assign(window.__paint, {armedAt: performance.now(), frameAt: null, draws: []}); }"
# The repainted frame in ms after act_and_time's own start, and how many separate bursts of drawing came after
# the first (a chart rebuilt by the rerun would draw again).
READ_PAINT_JS = """
() => {
  const {frameAt, draws} = window.__paint;
  const bursts = draws.filter((t, i) => i > 0 && t - draws[i - 1] > 50).length;
  return {paintedMs: frameAt > 0 ? frameAt - window.__settle.t0 : null, repaints: bursts};
}
"""


def run_case(browser, base_url: str, case: Case, floor_page, failures: Path) -> Result:
    """Open the case's link in a fresh session and time its moves, each followed by a move on floor_page
    (the floor, open all along), so that case and floor share the machine's load of the moment.

    A failure is kept in the result, with a screenshot in failures.
    """
    result = Result(case)
    page = None
    received: list[int] | None = [] if case.in_browser else None
    charts: list[int] = []
    try:
        page = open_page(browser, f"{base_url}/?{urlencode(case.query)}", case.ready, received, charts)
        if case.shows is not None:
            page.get_by_text(re.compile(case.shows)).first.wait_for()
        result.tokens = page.locator('[data-testid="token-chips"] .aa-chip').count() or None
        for opener in case.open_with:
            act_and_time(page, page.locator(opener).first.click, timeout_ms=TIMEOUT_MS)
        if received is not None:
            result.open_bytes = sum(received)
        for index, move in enumerate(case.moves):
            steady(page, case)
            mark_charts(page)
            before_charts = len(charts)
            if received is None:
                result.timings.append(time_move(page, move))
            else:
                time_in_browser(page, move, received, result)
            result.built.append(charts_built(page))
            result.charts_redrawn.append(sum(charts[before_charts:]))
            result.floor.append(time_move(floor_page, FLOOR_MOVES[index % len(FLOOR_MOVES)]))
        for index, move in enumerate(case.again, len(case.moves)):
            steady(page, case)
            result.again.append(time_move(page, move))
            result.floor.append(time_move(floor_page, FLOOR_MOVES[index % len(FLOOR_MOVES)]))
        if received is None and result.timings and not any(timing.settled_ms for timing in result.timings):
            raise RuntimeError("its presses changed nothing on the page: no run, no change seen (a hidden control, "
                               "or a press that does not reach it)")
    except Exception as error:  # noqa: BLE001 (reported in the table; the other cases still run)
        result.error = f"{type(error).__name__}: {str(error).splitlines()[0]}"
        if page is not None:
            shot = failures / f"{case.name.replace(' ', '_').replace(',', '')}.png"
            with contextlib.suppress(Exception):  # the screenshot is a courtesy
                page.screenshot(path=shot, full_page=True)
                result.error += f" (screenshot {shot})"
    finally:
        if page is not None:
            page.context.close()
    times = " ".join(f"{ms:.0f}" for ms in result.answered())
    again = "".join(f" {timing.settled_ms:.0f}" for timing in result.again)
    floor = " ".join(f"{timing.settled_ms:.0f}" for timing in result.floor)
    print(f"  {case.name}: {times}{'  again:' + again if again else ''}"
          f"{'  FAILED ' + result.error if result.error else ''}\n    floor: {floor}", file=sys.stderr, flush=True)
    return result


def steady(page, case: Case) -> None:
    """Wait, untimed, for what a reader waits for before the case's next press (Case.steady), if anything."""
    if case.steady is not None:
        page.wait_for_function(case.steady, timeout=TIMEOUT_MS)
        wait_until_settled(page)


def floor_moves(browser, url: str, count: int) -> list[Timing]:
    """The floor's slider moved count times (right, left, …) in a fresh session on url."""
    page = open_page(browser, url, FLOOR_READY)
    try:
        return [time_move(page, FLOOR_MOVES[index % len(FLOOR_MOVES)]) for index in range(count)]
    finally:
        page.context.close()


def moved_in_turn(pages: dict[str, tuple[object, list[Move]]], count: int) -> dict[str, list[float]]:
    """ms from key press to the settled page, by name: count moves on each (page, its moves) in turn, each page's
    moves taken in order and round again, so that a load that comes and goes weighs on all of them alike."""
    timings: dict[str, list[float]] = {name: [] for name in pages}
    for index in range(count):
        for name, (page, moves) in pages.items():
            timings[name].append(time_move(page, moves[index % len(moves)]).settled_ms)
    return timings


def time_move(page, move: Move) -> Timing:
    target = page.locator(move.selector)
    if move.fill is not None:
        target.fill(move.fill)
    target.focus()
    for key in move.setup_keys:
        target.press(key)
    if move.setup_keys or move.fill is not None:
        wait_until_settled(page, quiet_ms=100)  # what typing or opening a list redraws is not the move's
    return act_and_time(page, lambda: target.press(move.key), timeout_ms=TIMEOUT_MS)


def time_in_browser(page, move: Move, received: list[int], result: Result) -> None:
    """Time one press on a chart's own input: to the repainted frame, and to the settled page after the
    rerun that follows; count the bytes the server sent meanwhile and the canvas's later repaints."""
    picture = PICTURES[result.case.picture]
    before_pixels = page.evaluate(picture)
    before_bytes = len(received)
    target = page.locator(move.selector)
    target.focus()
    page.evaluate(ARM_PAINT_JS)
    result.timings.append(act_and_time(page, lambda: target.press(move.key), timeout_ms=TIMEOUT_MS))
    painted = page.evaluate(READ_PAINT_JS)
    if painted["paintedMs"] is None or page.evaluate(picture) == before_pixels:
        raise AssertionError(f"{move.key} on {move.selector} did not change the {result.case.picture} shown")
    result.painted_ms.append(painted["paintedMs"])
    result.repaints.append(painted["repaints"])
    result.bytes_in.append(sum(received[before_bytes:]))


def first_heatmap(browser, base_url: str) -> float:
    """Open the app's default link; return the time.monotonic() at which its first heatmap was drawn."""
    page = new_page(browser, viewport={"width": 1400, "height": 1000})
    try:
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(base_url)
        page.locator(CHART_DRAWN).first.wait_for()
        return time.monotonic()
    finally:
        page.context.close()
