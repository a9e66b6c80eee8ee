"""What a move costs the browser for the elements its rerun leaves alone, against those it sends again: the floor's
slider in a fragment, with N captions outside the fragment, or inside it, or none (bench/fragment_floor_app.py),
moved in turn in one Chromium, key press to the settled page. Asserts nothing.

    python -m bench.fragment_floor [--captions 60] [--moves 14]

Why the views' own controls rerun a fragment of their own (components/views/parts/own_fragment.py): what a run sends
again, React renders again; what it leaves alone costs less.
"""

from __future__ import annotations

import argparse

from bench.page_speed import FLOOR_MOVES, FLOOR_READY, ROOT, moved_in_turn, open_page
from bench.report import medians_table
from harness.browser import launch_chromium
from harness.server import streamlit_server

WHERE = ("none", "outside", "inside")


def measure(captions: int, moves: int) -> dict[str, list[float]]:
    """ms from key press to the settled page, each move, for each place of the captions: moved in turn, so that
    a load that comes and goes weighs on all three alike."""
    from playwright.sync_api import sync_playwright

    with streamlit_server(ROOT / "bench" / "fragment_floor_app.py", cwd=ROOT) as url, \
            sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        pages = {where: (open_page(browser, f"{url}/?where={where}&n={captions}", FLOOR_READY), FLOOR_MOVES)
                 for where in WHERE}
        return moved_in_turn(pages, moves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--captions", type=int, default=60)
    parser.add_argument("--moves", type=int, default=14)
    arguments = parser.parse_args()
    timings = measure(arguments.captions, arguments.moves)
    print(f"Medians of {arguments.moves} moves:\n")
    print(medians_table(f"captions ({arguments.captions})", timings, "none"))


if __name__ == "__main__":
    main()
