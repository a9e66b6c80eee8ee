"""Where one control's press goes, from the key to the settled page: what the server sends, and what the browser's
main thread does with it. Asserts nothing.

    python -m bench.press_anatomy QUERY SELECTOR KEYS [--presses N]

    python -m bench.press_anatomy "view=heads&text=the+quick+brown+fox" \\
        '.vega-bindings input[type="range"][name="layer_layer"]' ArrowRight,ArrowLeft

QUERY is the page's link after the "?", SELECTOR the element that gets KEYS (Playwright's key names, ArrowRight,
Space, Enter, taken in turn: "ArrowRight,ArrowLeft" moves a slider back and forth rather than against its end),
pressed N times after two presses that warm the page, then N times more under the trace (which slows the page: its
figures are shares, not times to compare with the first table's). The server is the app's own, on a free port, the
browser the bench's Chromium (optimising compilers on). Three tables:

- key -> settled, ms, each press (harness/browser.py's "settled"), without any instrumentation; and the medians of
  the press's three parts, by the page's own clock: until the page sent the server its rerun (the browser's
  handling of the key), until the server's last message (its run, sent as it goes), and until the page settled;
- the server's messages of a press: how many of each kind (an element Streamlit sends again, a block, a chart sent
  by its hash alone), and their bytes: every element a rerun draws is one message, and React renders each;
- the renderer's main thread over the same presses, traced: its tasks by kind (scripts, style, layout, paint,
  garbage collection), ms a press; then the scripts' own time by file (a CPU profile), ms a press.

bench/every_control.py times every control; this says why one is slow (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import statistics

from bench.page_speed import CHART_DRAWN, TIMEOUT_MS
from components.private_hooks import ForwardMsg
from harness.browser import Timing, act_and_time, launch_chromium, new_page, wait_until_settled
from harness.server import APP, streamlit_server

WARM_PRESSES = 2
# ms from the last press's start (harness/browser.py's arming) to the page's first message to its server since, or
# null when it sent none: when the browser asked for the rerun
FIRST_SEND_JS = """() => {
  const sent = window.__stProbe.sends.find(time => time >= window.__settle.t0);
  return sent === undefined ? null : sent - window.__settle.t0;
}"""
TRACED = ["devtools.timeline", "disabled-by-default-devtools.timeline"]
SHOWN = 14  # rows of each table of the browser's time


def message_kind(frame: bytes) -> str:
    """A websocket frame from the server, as "element: markdown", "block: column", "script_finished"…"""
    message = ForwardMsg()
    message.ParseFromString(frame)
    kind = message.WhichOneof("type")
    if kind != "delta":
        return kind
    delta = message.delta
    if delta.WhichOneof("type") == "new_element":
        return f"element: {delta.new_element.WhichOneof('type')}"
    if delta.WhichOneof("type") == "add_block":
        return f"block: {delta.add_block.WhichOneof('type') or 'vertical'}"
    return delta.WhichOneof("type")


def main_thread_tasks(trace: dict, presses: int) -> list[tuple[str, float, float]]:
    """(event, ms a press, times a press) of the renderers' main threads, most time first. Events nest (a task
    holds its scripts, which hold their garbage collection): each row is that kind's own total, not a share."""
    events = trace["traceEvents"]
    main = {(event["pid"], event["tid"]) for event in events
            if event.get("ph") == "M" and event.get("name") == "thread_name"
            and event["args"].get("name") == "CrRendererMain"}
    spent, count = collections.Counter(), collections.Counter()
    for event in events:
        if (event.get("pid"), event.get("tid")) in main and event.get("ph") == "X" and "dur" in event:
            spent[event["name"]] += event["dur"] / 1000
            count[event["name"]] += 1
    return [(name, ms / presses, count[name] / presses) for name, ms in spent.most_common()]


def script_files(profile: dict, presses: int) -> list[tuple[str, float]]:
    """(script file, or the browser's own "(program)", "(garbage collector)", ms a press) of a CDP CPU profile's
    self time, idle left out, most first."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    spent = collections.Counter()
    for sample, delta_us in zip(profile["samples"], profile["timeDeltas"], strict=True):
        frame = nodes[sample]["callFrame"]
        name = frame["url"].rsplit("/", 1)[-1].split(".")[0] or frame["functionName"]
        spent[name] += delta_us / 1000
    del spent["(idle)"]
    return [(name, ms / presses) for name, ms in spent.most_common()]


def measure(query: str, selector: str, keys: list[str], presses: int) -> None:
    from playwright.sync_api import sync_playwright

    with streamlit_server(APP) as url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = new_page(browser, viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        frames: list[bytes] = []
        page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: frames.append(frame)))
        page.goto(f"{url}/?{query}")
        page.locator(f"{CHART_DRAWN} >> visible=true").first.wait_for()  # the lesson draws its neighbours hidden
        wait_until_settled(page, quiet_ms=1000, timeout_ms=TIMEOUT_MS)

        turns = itertools.cycle(keys)

        def press() -> Timing:
            key = next(turns)
            return act_and_time(page, lambda: page.locator(selector).first.press(key))

        for _ in range(WARM_PRESSES):
            press()
        settled, asked, answered, kinds, sizes = [], [], [], collections.Counter(), []
        for _ in range(presses):
            frames.clear()
            timing = press()
            settled.append(timing.settled_ms)
            asked.append(page.evaluate(FIRST_SEND_JS))
            answered.append(timing.last_message_ms)
            kinds.update(message_kind(frame) for frame in frames)
            sizes.append(sum(len(frame) for frame in frames))
        print(f"key -> settled, ms: {', '.join(f'{ms:.0f}' for ms in settled)} "
              f"(median {statistics.median(settled):.0f})")
        if None not in asked and None not in answered:
            print(f"medians: key -> rerun asked {statistics.median(asked):.0f} ms, -> the server's last message "
                  f"{statistics.median(answered):.0f} ms, -> settled {statistics.median(settled):.0f} ms")
        print()
        print(f"| the server's messages, a press ({statistics.median(sizes) / 1024:.1f} kB, median) | count |")
        print("|---|---|")
        for kind, count in kinds.most_common():
            print(f"| {kind} | {count / presses:g} |")

        profiler = page.context.new_cdp_session(page)
        profiler.send("Profiler.enable")
        profiler.send("Profiler.setSamplingInterval", {"interval": 200})
        browser.start_tracing(page=page, categories=TRACED)
        profiler.send("Profiler.start")
        for _ in range(presses):
            press()
        profile = profiler.send("Profiler.stop")["profile"]
        trace = json.loads(browser.stop_tracing())
        print("\n| the renderer's main thread (traced) | ms a press | times a press |\n|---|---|---|")
        for name, ms, times in main_thread_tasks(trace, presses)[:SHOWN]:
            print(f"| {name} | {ms:.1f} | {times:.1f} |")
        print("\n| scripts' own time, by file (CPU profile) | ms a press |\n|---|---|")
        for name, ms in script_files(profile, presses)[:SHOWN]:
            print(f"| {name} | {ms:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("query", help='the link after "?", e.g. "view=heads&text=the+quick+brown+fox"')
    parser.add_argument("selector", help="the element pressed (a Playwright selector)")
    parser.add_argument("keys", help="the keys pressed in turn, by commas (ArrowRight,ArrowLeft; Space; Enter…)")
    parser.add_argument("--presses", type=int, default=3)
    arguments = parser.parse_args()
    measure(arguments.query, arguments.selector, arguments.keys.split(","), arguments.presses)


if __name__ == "__main__":
    main()
