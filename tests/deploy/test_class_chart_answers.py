"""A student answers "which of this layer's heads is a previous-token head?" by clicking the head in the all-heads
grid: the click counts as their vote, opens nothing, and leaves them following; with no question open, the click
opens the head as it always did.

Over Streamlit's websocket against a real server (harness/voting.py), the click sent as the frontend sends it.
"""

from __future__ import annotations

import asyncio
from contextlib import ExitStack

import pytest

from components.caches.offered import MODEL_DIRS_ENV
from components.page.page_state import DEFAULT_MODEL_ENV
from components.server.class_store import STORE_ENV
from harness import voting
from harness.following import class_code
from harness.server import APP, streamlit_server
from harness.session_client import WebsocketSession

pytestmark = pytest.mark.deploy

TEXT = "the class clicks the head it thinks looks back"
GRID, OPEN_HEAD = "grid", "open_head"  # components/views/heads.py's chart, components/charts/grid.py's selection


def test_a_click_on_a_head_in_the_grid_answers_which_head_and_keeps_the_student_following(tiny_checkpoint):
    env = {MODEL_DIRS_ENV: str(tiny_checkpoint), DEFAULT_MODEL_ENV: str(tiny_checkpoint), STORE_ENV: "memory"}
    with ExitStack() as stack:
        base_url = stack.enter_context(streamlit_server(APP, env=env))
        asyncio.run(_click_to_answer(base_url))


async def _click_to_answer(base_url: str) -> None:
    teacher = await WebsocketSession.connect(base_url, {"teach": "1", "text": TEXT, "view": "heads", "layer": "1"})
    student = await voting.join(base_url, class_code(teacher))
    other = await voting.join(base_url, class_code(teacher))
    try:
        await student.session.set_chart_selection(GRID, {OPEN_HEAD: [{"head": 1}]})  # no question yet: opens it
        assert "view=heads" not in student.session.query_string and "head=1" in student.session.query_string

        await voting.ask(teacher)
        await asyncio.gather(voting.hear(other), student.session.press_button("follow_again"))
        await voting.hear(student)
        assert any("Click the head in the grid" in said for said in student.session.texts())

        await student.session.set_chart_selection(GRID, {OPEN_HEAD: [{"head": 2}]})
        assert "view=heads" in student.session.query_string
        assert any(said.startswith("Following the teacher") for said in student.session.texts())
        await other.session.set_chart_selection(GRID, {OPEN_HEAD: [{"head": 3}]})
        await other.session.set_chart_selection(GRID, {OPEN_HEAD: [{"head": 0}]})  # a change of mind
        assert await voting.read_count(teacher) == 2

        await voting.close_and_reveal(teacher)
        assert voting.revealed_votes(teacher) == [1, 0, 1, 0]
        assert not teacher.errors() and not student.session.errors() and not other.session.errors()
    finally:
        await asyncio.gather(teacher.close(), student.session.close(), other.session.close())
