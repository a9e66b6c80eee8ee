"""How long the page takes to answer a slider, in a real Chromium, against the cheapest possible page.

Starts the real app and bench/floor_app.py (one slider, one line of text), moves a slider with the
keyboard again and again, and times each key press until the page has settled (no script running,
no DOM change for 300 ms; the quiet window itself is not counted). Prints figures, asserts nothing.

    python bench/page_speed.py

The floor includes what every Streamlit page pays: the slider's debounce, the websocket round trip,
a script run and React's redraw. The ratio to the floor is what the page itself adds.
"""

from __future__ import annotations

import statistics
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.harness import (  # noqa: E402
    Timing,
    launch_chromium,
    new_page,
    streamlit_server,
    time_slider_key,
    wait_until_settled,
)

APP = ROOT / "streamlit_app.py"
FLOOR_APP = ROOT / "bench" / "floor_app.py"
# 30 words that are one WordPiece each: 32 tokens with [CLS] and [SEP].
TEXT_32 = ("the students read a long story about a small town by the sea where every house had a blue door "
           "and the old man sat in his chair all day")
# About 720 tokens, cut by the page to the 512 BERT reads.
TEXT_512 = ("the quick brown fox jumps over the lazy dog while the students read a long story "
            "about a small town by the sea. ") * 30
RIGHT_11 = ["ArrowRight"] * 11  # 0 -> 11: every move a value not seen before
THERE_AND_BACK = ["ArrowRight"] * 5 + ["ArrowLeft"] * 5  # the layer slider has only 6 values


@dataclass(frozen=True)
class Case:
    name: str
    page: str  # "app" or "floor"
    query: dict[str, str]
    slider: str  # the slider's key
    presses: list[str]


CASES = [
    Case("floor: one slider, one line", "floor", {}, "x", RIGHT_11),
    Case("head, default text", "app", {}, "head", RIGHT_11),
    Case("head, 32 tokens", "app", {"text": TEXT_32}, "head", RIGHT_11),
    Case("layer, 32 tokens", "app", {"text": TEXT_32}, "layer", THERE_AND_BACK),
    Case("head, 512 tokens", "app", {"text": TEXT_512}, "head", RIGHT_11),
]


def run_case(browser, base_url: str, case: Case) -> tuple[int | None, list[Timing]]:
    """Open a fresh session, move the slider; return the token count (None on the floor) and the timings."""
    page = new_page(browser, viewport={"width": 1400, "height": 1000})
    try:
        page.set_default_timeout(120_000)
        page.goto(f"{base_url}/?{urlencode(case.query)}" if case.query else base_url)
        if case.page == "app":
            chart = page.locator('[data-testid="stVegaLiteChart"]').filter(has_text="Attention weights")
            chart.locator("svg g.mark-group.role-frame").first.wait_for()
        page.locator(f".st-key-{case.slider} input[type='range']").wait_for()
        wait_until_settled(page)
        tokens = page.locator('[data-testid="token-chips"] .aa-chip').count() if case.page == "app" else None
        return tokens, [time_slider_key(page, case.slider, press, timeout_ms=120_000) for press in case.presses]
    finally:
        page.context.close()


def main() -> None:
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    with ExitStack() as stack:
        urls = {"app": stack.enter_context(streamlit_server(APP)),
                "floor": stack.enter_context(streamlit_server(FLOOR_APP))}
        playwright = stack.enter_context(sync_playwright())
        browser = launch_chromium(playwright)
        stack.callback(browser.close)
        results = []
        for case in CASES:
            tokens, timings = run_case(browser, urls[case.page], case)
            results.append((case, tokens, timings))
            print(f"  {case.name}: " + " ".join(f"{t.settled_ms:.0f}" for t in timings), file=sys.stderr, flush=True)
    report(results, time.monotonic() - started)


def report(results, seconds: float) -> None:
    def settled(timings):
        return [t.settled_ms for t in timings]

    floor = statistics.median(next(settled(timings) for case, _, timings in results if case.page == "floor"))
    print(f"\nKey press -> settled, ms (fresh session per case; {seconds:.0f} s in all). 'server' is the median"
          f" time of the server's last message, the rest is the browser drawing.\n")
    print(f"{'case':<30} {'T':>4} {'moves':>5} {'median':>7} {'max':>7} {'× floor':>8} {'server':>7}")
    for case, tokens, timings in results:
        median = statistics.median(settled(timings))
        server = statistics.median(t.last_message_ms or 0.0 for t in timings)
        print(f"{case.name:<30} {tokens or '':>4} {len(timings):>5} {median:>7.0f} {max(settled(timings)):>7.0f} "
              f"{median / floor:>8.1f} {server:>7.0f}")
    layer = settled(next(timings for case, _, timings in results if case.slider == "layer"))
    print(f"\nlayer slider: first visits median {statistics.median(layer[:5]):.0f} ms, "
          f"returns (cached trace) median {statistics.median(layer[5:]):.0f} ms")


if __name__ == "__main__":
    main()
