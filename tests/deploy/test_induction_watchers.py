"""A page that follows another page's induction training, and whose tab closes, ends its run at once, whatever the
training it follows does: before, its run went on until that training's next step, which a training waiting in line
does not take for as long as the line holds it.

On a real server, through Streamlit's own websocket protocol, with one training at a time
(ATTENTION_ANATOMY_TRAINING_SLOTS=1). A long training holds the line; a second page's training waits in it; a third
page presses Train on the second's settings and follows it, and the second's page counts it. The follower's tab
closes while the line has not moved: the second's page stops counting it, which it does only once the follower's run
has left its loop (SharedRuns.watch).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from components.server.turns import SLOTS_ENV
from harness.server import APP, streamlit_server
from harness.session_client import WebsocketSession

pytestmark = pytest.mark.load

TRAIN = "induction_train"  # components/views/induction.py
# Long enough to hold the line through the whole test on any machine (about a minute on a quiet core, cut at the
# server's two-minute limit); closing its page stops it at its next redraw.
LONG = {"view": "induction", "steps": "2000", "heads": "8", "vocab": "64", "seed": "201"}
SHORT = {"view": "induction", "steps": "100", "heads": "2", "vocab": "16", "seed": "202"}
WAIT_S = 60.0  # for what a busy two-core machine does in a second or two


async def until(condition: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    """Poll condition() until it holds; AssertionError naming what after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        await asyncio.sleep(0.1)


def progress(session: WebsocketSession) -> str:
    """What the page's progress bar says now ("" without one)."""
    bars = [element.progress.text for element in session.elements() if element.WhichOneof("type") == "progress"]
    return bars[0] if bars else ""


def press(session: WebsocketSession) -> asyncio.Task:
    """Press Train; the run goes on in a task of the running loop, the page's messages applied as they come."""
    return asyncio.create_task(session.press_button(TRAIN))


def test_a_closed_followers_run_ends_while_the_run_it_follows_waits_in_line():
    async def run() -> None:
        long = await WebsocketSession.connect(base_url, LONG)
        waiting = await WebsocketSession.connect(base_url, SHORT)
        follower = await WebsocketSession.connect(base_url, SHORT)
        runs = [press(long)]
        try:
            await until(lambda: progress(long).startswith("Step "), "the long training's first step")
            runs.append(press(waiting))
            await until(lambda: progress(waiting).startswith("Waiting for a free place on the server: 1 training "
                                                             "ahead"), "the second training to wait in line")
            runs.append(press(follower))
            await until(lambda: progress(waiting).endswith("1 other page follows this run."),
                        "the waiting training's page to count its follower")

            runs.pop().cancel()
            await follower.close()  # the tab closes
            await until(lambda: "follow" not in progress(waiting), "the closed follower to stop being counted")
            assert progress(waiting).startswith("Waiting for a free place"), "the line moved: this proves nothing"
        finally:
            for task in runs:
                task.cancel()
            await asyncio.gather(long.close(), waiting.close(), follower.close())

    with streamlit_server(APP, env={SLOTS_ENV: "1"}) as base_url:
        asyncio.run(run())
