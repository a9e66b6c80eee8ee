"""What the server sends a browser test's page over the websocket: which parts of the page a move redrew."""

from __future__ import annotations


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
