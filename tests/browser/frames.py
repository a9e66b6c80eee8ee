"""What the server sends a browser test's page over the websocket (which parts of the page a move redrew), and what
the page sends the server, held back while a test proves that no script ran."""

from __future__ import annotations

import re
import time


def frames_after(page) -> list[bytes]:
    """The websocket's frames from now on, as bytes (Streamlit's protobuf messages hold their text as UTF-8), each
    the browser sends as None: a rerun the page asks for by itself once it has measured the window can come late."""
    frames: list[bytes | None] = []

    def watch(socket) -> None:
        socket.on("framereceived", lambda payload: frames.append(payload if isinstance(payload, bytes)
                                                                 else payload.encode()))
        socket.on("framesent", lambda payload: frames.append(None))

    page.on("websocket", watch)
    return frames


def answer(frames: list[bytes | None]) -> bytes:
    """What the server sent between the browser's first message in frames and its next one: its answer to the
    move made after frames were cleared (a report of the window's size, sent later, has an answer of its own)."""
    sent = [index for index, frame in enumerate(frames) if frame is None]
    end = sent[1] if len(sent) > 1 else len(frames)
    return b"".join(frames[sent[0] + 1:end])


def wait_until_measured(page, frames: list[bytes | None], timeout_s: float = 120.0) -> None:
    """Wait for the rerun that follows the page's first report of the window's size (components/page/viewport.py),
    then for the page to settle: a move made before it raced that report, whose widget states were the old ones."""
    from harness.browser import wait_until_settled

    waited = 0.0
    while not any(frame and b'{"main": ' in frame for frame in frames):
        if waited > timeout_s:
            raise TimeoutError("the page never ran with the window's size")
        page.wait_for_timeout(200)
        waited += 0.2
    wait_until_settled(page)


class HeldMessages:
    """The page's websocket messages to the Streamlit server, passed on, or held while `holding`."""

    def __init__(self, page):
        self.holding, self.held, self.server = False, [], None
        page.route_web_socket(re.compile(r".*/_stcore/stream$"), self._route)

    def _route(self, socket) -> None:
        self.server = socket.connect_to_server()
        socket.on_message(lambda message: self.held.append(message) if self.holding else self.server.send(message))

    def release(self) -> None:
        self.holding = False
        for message in self.held:
            self.server.send(message)
        self.held.clear()

    def wait_for_held(self, page, timeout_s: float = 10.0) -> None:
        """Wait until a message is held: Streamlit sends a chart's selection a moment after the move, and Playwright
        hands a routed message over only while it is called (page.wait_for_timeout)."""
        deadline = time.monotonic() + timeout_s
        while not self.held and time.monotonic() < deadline:
            page.wait_for_timeout(50)


def opened_watched(page, url: str, ready: str) -> list[bytes | None]:
    """Open url on page, its websocket watched from before the first frame, until the element ready (a CSS selector)
    is there and the page has run with the window's size: the frames since (frames_after's)."""
    frames = frames_after(page)
    page.goto(url)
    page.locator(ready).wait_for()
    wait_until_measured(page, frames)
    return frames

