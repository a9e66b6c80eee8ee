"""What the one-head view's chart costs of a press of its other controls: the same presses on the app's page with
the chart as the app draws it (every head of a 32-token text in its data, so that its own Layer and Head inputs
switch in the browser), with the picked head alone in its data, and with no chart (bench/chart_share_app.py), each
page on a server of its own, moved in turn with the floor's slider in one Chromium. Asserts nothing.

    python -m bench.chart_share [--moves 14]

Hide the sink tokens gives the chart other rows and keys, which Vega builds anew; the mask gives it new numbers in
the same spec. Under the presses' tables, the Head input: in the browser with every head sent, a rerun with one.
"""

from __future__ import annotations

import argparse
import os
from urllib.parse import urlencode

from bench.page_speed import FLOOR_APP, FLOOR_MOVES, FLOOR_READY, ROOT, TEXT_32, Move, moved_in_turn, open_page
from bench.report import medians_table
from components.private_hooks import bound_input_name
from harness.browser import launch_chromium
from harness.server import streamlit_server

APP = ROOT / "bench" / "chart_share_app.py"
PAGES = {"every": "the chart, every head sent (the app's)", "one": "the chart, the picked head alone sent",
         "none": "no chart"}
READY = ".st-key-hide_special"
HEAD_INPUT = f'.vega-bindings input[type="range"][name="{bound_input_name("head")}"]'
CONTROLS = {
    "Hide the sink tokens (the chart built anew)": [Move(f"{READY} input", "Space")],
    "Mask, causal and back (new numbers)": [Move(".st-key-mask button:has-text('causal')", "Space"),
                                            Move(".st-key-mask button:has-text(\"model's own\")", "Space")],
    "the chart's own Head input": [Move(HEAD_INPUT, "ArrowRight"), Move(HEAD_INPUT, "ArrowLeft")],
}


def measure(moves: int) -> dict[str, dict[str, list[float]]]:
    """ms from key press to the settled page, each move, by control: the floor's slider, then each page's press,
    in turn, so that a load that comes and goes weighs on all alike. The page without a chart has no Head input."""
    from playwright.sync_api import sync_playwright

    link = "/?" + urlencode({"view": "head", "text": TEXT_32})
    with streamlit_server(APP, cwd=ROOT, env=_env("every")) as every, \
            streamlit_server(APP, cwd=ROOT, env=_env("one")) as one, \
            streamlit_server(APP, cwd=ROOT, env=_env("none")) as none, \
            streamlit_server(FLOOR_APP, cwd=ROOT) as floor_url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        floor = open_page(browser, floor_url, FLOOR_READY)
        pages = {name: open_page(browser, url + link, READY) for name, url in
                 (("every", every), ("one", one), ("none", none))}
        timings = {}
        for control, presses in CONTROLS.items():
            shown = {name: page for name, page in pages.items() if page.locator(presses[0].selector).count()}
            timings[control] = moved_in_turn({"floor": (floor, FLOOR_MOVES),
                                              **{PAGES[name]: (page, presses) for name, page in shown.items()}}, moves)
        return timings


def _env(drawn: str) -> dict[str, str]:
    """The server's environment: this one's, and which chart its page draws (bench/chart_share_app.DRAWN)."""
    return {**os.environ, "BENCH_CHART": drawn}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=14)
    arguments = parser.parse_args()
    print(f"The one-head view, a 32-token text; medians of {arguments.moves} presses.")
    for control, times in measure(arguments.moves).items():
        print(f"\n{control}:\n")
        print(medians_table("pressed on the page with…", times, "floor"))


if __name__ == "__main__":
    main()
