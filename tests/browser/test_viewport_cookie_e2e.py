"""A page reopened in the same browser (a reload, a second link) is drawn once, for the window's own size: the size
its script measured last time is in a cookie, where a browser new to the page is drawn for the default size first,
then again once the script has measured the window (components/page/viewport.py)."""

from __future__ import annotations

from components.page.viewport import COOKIE
from components.private_hooks import BackMsg
from harness.browser import load_page, open_tab, weights_chart
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

PROJECTOR = {"width": 1280, "height": 720}  # not the default 1366×768, so a first visit runs twice


def sent_after(page) -> list[bytes]:
    """What the page sends the server over its websocket from now on."""
    sent: list[bytes] = []
    page.on("websocket", lambda socket: socket.on(
        "framesent", lambda payload: sent.append(payload if isinstance(payload, bytes) else payload.encode())))
    return sent


def runs_asked(sent: list[bytes]) -> int:
    """How many script runs the page asked for (the opening one, and one for each size its script reported); its
    other messages (a heartbeat on a busy machine, say) are none."""
    return sum(BackMsg.FromString(message).WhichOneof("type") == "rerun_script" for message in sent)


def test_a_page_reopened_in_the_same_browser_is_drawn_once_for_its_window(browser, base_url):
    page = open_tab(browser, viewport=PROJECTOR)  # a window that has never seen the page
    try:
        reopened_once_at_its_size(page, base_url)
    finally:
        page.context.close()


def reopened_once_at_its_size(page, base_url: str) -> None:
    frames = sent_after(page)
    load_page(page, f"{base_url}/?text=time+flies+like+an+arrow")
    asked = runs_asked(frames)
    # The default size first, then the measured one; at least, not exactly: two CI runs of the whole suite saw a third
    # run here, whose cause 12 runs under 4 CPU burners did not show. The claim is the reopened page's one run below.
    assert asked >= 2, f"a browser new to the page: the default size first, then the measured one; {asked} runs"
    measured_width = weights_chart(page).locator("canvas").bounding_box()["width"]
    assert {cookie["name"]: cookie["value"] for cookie in page.context.cookies()}[COOKIE].endswith("x1280x720")

    frames.clear()
    load_page(page, f"{base_url}/?text=time+flies+like+an+arrow")  # reloaded
    asked = runs_asked(frames)
    assert asked == 1, f"a reopened page: one run for the size in the cookie; {asked} runs"
    assert weights_chart(page).locator("canvas").bounding_box()["width"] == measured_width
