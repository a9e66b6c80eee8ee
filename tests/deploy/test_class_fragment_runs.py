"""A follower's watch lives in the view's fragment (classroom.watch): the teacher's move of a control of the view
reruns the follower's fragment alone, which is what lets thirty followers' runs fit in a second on one server
(bench/class_follow.py); a move of a sidebar control, or the class ending, reruns the whole page, which draws them.

Over Streamlit's websocket against a real server, the follower's trigger sent as its page's script sends it.
"""

from __future__ import annotations

import asyncio
from contextlib import ExitStack

import pytest

from components.caches.offered import MODEL_DIRS_ENV
from components.page.page_state import DEFAULT_MODEL_ENV
from components.server.class_store import STORE_ENV
from harness.classroom import move_on_chart
from harness.following import WATCH, class_code, join, shown_head, watch_data
from harness.server import APP, streamlit_server
from harness.session_client import WebsocketSession

pytestmark = pytest.mark.deploy

TEXT = "the teacher moves and the class follows"
NEW_TEXT = "a new sentence for the class"


def test_a_head_reruns_the_followers_view_alone_and_a_text_or_the_end_the_whole_page(tiny_checkpoint):
    env = {MODEL_DIRS_ENV: str(tiny_checkpoint), DEFAULT_MODEL_ENV: str(tiny_checkpoint), STORE_ENV: "memory"}
    with ExitStack() as stack:
        base_url = stack.enter_context(streamlit_server(APP, env=env))
        asyncio.run(_teach_and_follow(base_url))


async def _teach_and_follow(base_url: str) -> None:
    teacher = await WebsocketSession.connect(base_url, {"teach": "1", "text": TEXT})
    follower = await join(base_url, class_code(teacher))
    session = follower.session
    try:
        assert watch_data(session) is not None, "the follower's page has no class watch"
        assert shown_head(session) == 0

        await move_on_chart(teacher, "head", 2)
        await session.send_trigger(WATCH, "behind")
        assert session.ran_fragment_alone, "a head's move ran the page"
        assert shown_head(session) == 2
        assert any(said.startswith("Following the teacher") for said in session.texts())

        await teacher.set_text("text", NEW_TEXT)
        await session.send_trigger(WATCH, "behind")
        assert not session.ran_fragment_alone, "a new text ran the view's fragment alone"
        assert "text=a+new+sentence" in session.query_string
        assert shown_head(session) == 2

        await teacher.press_button("end_class")
        await session.send_trigger(WATCH, "behind")
        assert not session.ran_fragment_alone, "the class's end ran the fragment alone"
        assert any("has ended" in said for said in session.texts())
        assert watch_data(session) is None, "a page in no class still watches one"
        assert not session.errors()
    finally:
        await teacher.close()
        await session.close()
