"""A chart's picture, made on a click, downloads though other readers' runs end before the browser fetches it.

Streamlit leaves the file a deferred download makes to no session, and every run of any session ends by collecting
such files: marked at one run's end, deleted at the next (components/private_hooks.keep_made_downloads). Here the
server's answer to the click, the file's address, is held on its way to the page while another reader's page runs
twice; then it goes on, and the browser fetches the file.
"""

from __future__ import annotations

from pathlib import Path

from components.private_hooks import ForwardMsg
from harness.browser import HeldReplies, act_and_time, load_page, open_tab
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

PAGE = "/?text=the+cat+sat+on+the+mat"


def file_address_among(held: list) -> bool:
    """Whether the server's answer to a deferred download (the made file's address) is among the held replies."""
    for message in held:
        if isinstance(message, bytes):
            reply = ForwardMsg()
            reply.ParseFromString(message)
            if reply.WhichOneof("type") == "backend_operation_response":
                return True
    return False


def test_a_charts_picture_downloads_though_two_runs_of_another_reader_end_before_it_is_fetched(browser, base_url):
    reader, other = open_tab(browser), open_tab(browser)
    try:
        replies = HeldReplies.on(reader)
        load_page(reader, f"{base_url}{PAGE}")
        load_page(other, f"{base_url}{PAGE}")
        reader.locator('[data-testid="stPopover"]').filter(has_text="Download chart").first.locator("button").click()
        picture = reader.locator('[data-testid="stDownloadButton"] button').filter(has_text="PNG").first
        picture.wait_for()
        with reader.expect_download() as download_info:
            replies.hold()
            picture.click()
            assert replies.wait_until_held(reader, until=file_address_among), "the server never answered the click"
            for mask in ("causal", "model's own"):  # two runs of another reader end
                act_and_time(other, other.locator(".st-key-mask button").filter(has_text=mask).first.click)
            replies.release()
        assert Path(download_info.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        reader.context.close()
        other.context.close()
