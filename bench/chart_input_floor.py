"""What a chart's own input costs at the least, against the floor: a heatmap whose layers are all in the browser,
its input moved, the move rerunning the whole page, a fragment holding the chart alone, or nothing
(bench/chart_input_floor_app.py); each page's floor slider moved too, all in turn in one Chromium, key press to the
settled page. Asserts nothing.

    python -m bench.chart_input_floor [--moves 14]

Whether a control that switches in the browser from numbers sent once can settle within 2× the floor, and what
telling the server (a rerun that writes the link) adds to it.
"""

from __future__ import annotations

import argparse

from bench.page_speed import FLOOR_APP, FLOOR_MOVES, FLOOR_READY, ROOT, Move, moved_in_turn, open_page
from bench.report import medians_table
from harness.browser import launch_chromium
from harness.server import streamlit_server

APP = ROOT / "bench" / "chart_input_floor_app.py"
RUNS = ("page", "fragment", "none")
INPUT = '.vega-bindings input[type="range"]'
CHART_MOVES = [Move(INPUT, "ArrowRight"), Move(INPUT, "ArrowLeft")]


def measure(moves: int) -> dict[str, list[float]]:
    """ms from key press to the settled page, each move: the floor's slider (bench/floor_app.py, on a server of its
    own, as every bench's floor), then the chart's input on each page, moved in turn, so that a load that comes and
    goes weighs on all alike."""
    from playwright.sync_api import sync_playwright

    with streamlit_server(APP, cwd=ROOT) as url, \
            streamlit_server(FLOOR_APP, cwd=ROOT) as floor_url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        floor = open_page(browser, floor_url, FLOOR_READY)
        pages = {run: (open_page(browser, f"{url}/?run={run}", INPUT), CHART_MOVES) for run in RUNS}
        return moved_in_turn({"floor": (floor, FLOOR_MOVES), **pages}, moves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=14)
    arguments = parser.parse_args()
    timings = measure(arguments.moves)
    print(f"Medians of {arguments.moves} moves:\n")
    print(medians_table("moved, the chart's input rerunning…", timings, "floor"))


if __name__ == "__main__":
    main()
