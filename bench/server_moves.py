"""What a move costs the server alone, without a browser: each view's sliders and segmented controls moved over
Streamlit's websocket (harness/session_client.py), each run timed from the move sent to the run finished.

For every slider, its value is moved up through values not seen yet (first visits: what the server computes and
builds anew), then back down through them (values seen: what it kept); for every segmented control, each option in
turn, then each again. The bench's controls group (bench/every_control.py) times the settled page in Chromium, the
browser's drawing included; this is the server's share of it, and the floor's page here is its reference: one
slider of bench/floor_app.py moved as often, on a server of its own, in the same run.

    python -m bench.server_moves [view ...]      (default: every view that reads the bundled model's text)

Prints one line a control; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys

from bench.page_speed import APP, FLOOR_APP, TEXT_32
from components.page.view_list import VIEWS
from harness.server import streamlit_server
from harness.session_client import WebsocketSession

VISITS = 4  # new values a slider is moved through, then back
ROUNDS = 2  # times every option of a segmented control is picked
# The page's frame and the class's controls: not a view's.
NOT_THE_VIEWS = ("view", "preset", "text", "text_b", "model", "present", "colour_blind", "start_class", "viewport")
OPENING = {"lesson": {"step": "6"}}  # a step with two neighbours (drawn in a run the browser asks for: not here)


async def floor_ms(base_url: str) -> float:
    session = await WebsocketSession.connect(base_url)
    try:
        return 1000 * statistics.median([await session.set_slider("x", float(move % 2)) for move in range(1, 13)])
    finally:
        await session.close()


async def view_moves(base_url: str, view: str) -> list[str]:
    """A line for each slider and segmented control of the view's main area: its median run, first visits and
    values seen apart."""
    session = await WebsocketSession.connect(base_url, {"view": view, "text": TEXT_32, **OPENING.get(view, {})},
                                             timeout_s=180)
    lines = []
    try:
        for key in [key for key in session.widget_keys() if key not in NOT_THE_VIEWS]:
            kind = session.kind_of(key)
            if kind == "slider":
                lines.append(await _slider(session, view, key))
            elif kind == "button_group":
                lines.append(await _options(session, view, key))
    finally:
        await session.close()
    return [line for line in lines if line]


async def _slider(session: WebsocketSession, view: str, key: str) -> str:
    low, high, step = session.slider_range(key)
    start = session.slider_value(key)
    ahead = [start + step * move for move in range(1, VISITS + 1) if start + step * move <= high]
    if not ahead:
        ahead = [start - step * move for move in range(1, VISITS + 1) if start - step * move >= low]
    if not ahead:
        return ""
    first = [await session.set_slider(key, value) for value in ahead]
    again = [await session.set_slider(key, value) for value in [*ahead[-2::-1], start]]
    return _line(view, key, first, again)


async def _options(session: WebsocketSession, view: str, key: str) -> str:
    options = session.options(key)
    runs = [await session.set_choice(key, option) for _ in range(ROUNDS) for option in [*options[1:], options[0]]]
    return _line(view, key, runs[:len(options)], runs[len(options):])


def _line(view: str, key: str, first: list[float], again: list[float]) -> str:
    return (f"| {view}: {key} | {1000 * statistics.median(first):.0f} ms | {1000 * statistics.median(again):.0f} ms "
            f"| {len(first)} + {len(again)} |")


async def measure(app_url: str, floor_url: str, views: list[str]) -> list[str]:
    lines = [f"| floor: its slider | {await floor_ms(floor_url):.0f} ms | | 12 |"]
    for view in views:
        print(f"{view}…", file=sys.stderr, flush=True)
        lines += await view_moves(app_url, view)
    return lines


def main() -> None:
    readers = [view.name for view in VIEWS if not view.standalone and view.name not in ("lens", "generate")]
    parser = argparse.ArgumentParser(prog="python -m bench.server_moves", description=__doc__.splitlines()[0])
    parser.add_argument("views", nargs="*", default=readers, help=f"views to move (default: {' '.join(readers)})")
    args = parser.parse_args()
    with streamlit_server(APP) as app_url, streamlit_server(FLOOR_APP, cwd=APP.parent) as floor_url:
        lines = asyncio.run(measure(app_url, floor_url, args.views))
    print("| control | first visits (median run) | values seen | runs |\n|---|---|---|---|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
