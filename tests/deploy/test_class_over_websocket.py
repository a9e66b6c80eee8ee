"""A class over Streamlit's websocket against one real server (harness/voting.py, harness/following.py), each test
its own class: what a follower's page runs when the teacher moves, a student answering by a click on the chart, and
a hundred followers answering at once. A hundred Chromium pages would cost the machine more than the server's work.

- A follower's watch lives in the view's fragment (classroom.watch): the teacher's move of a control of the view
  reruns the follower's fragment alone, which is what lets thirty followers' runs fit in a second on one server
  (bench/class_follow.py); a move of a sidebar control, or the class ending, reruns the whole page.
- A student answers "which of this layer's heads is a previous-token head?" by clicking the head in the all-heads
  grid: the click counts as their vote, opens nothing, and leaves them following; with no question open, the click
  opens the head as it always did.
- A class of 100 answers at once: every vote counted once, a change of mind replacing its voter's vote, a reload
  adding none, the teacher's count reaching the class, the revealed bars equal to each voter's last choice, and a
  vote rerunning the question's card alone. How fast is the bench's (bench/class_votes_page.py), not a test's.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from components.caches.offered import MODEL_DIRS_ENV
from components.page.page_state import DEFAULT_MODEL_ENV
from components.server.class_store import STORE_ENV
from harness import voting
from harness.classroom import move_on_chart
from harness.following import WATCH, class_code, join, shown_head, watch_data
from harness.server import APP, streamlit_server
from harness.session_client import WebsocketSession

pytestmark = pytest.mark.deploy

FOLLOW_TEXT = "the teacher moves and the class follows"
NEW_TEXT = "a new sentence for the class"
CLICK_TEXT = "the class clicks the head it thinks looks back"
GRID, OPEN_HEAD = "grid", "open_head"  # components/views/heads.py's chart, components/charts/grid.py's selection
FOLLOWERS = 100
VOTE_TEXT = "the class answers its teacher at once"
CARD_MOST = 15  # elements and containers the question's card draws, at most
COUNT_TRIES = 20  # the teacher's count read again until it holds every vote: a run a read


@pytest.fixture(scope="module")
def class_server(tiny_checkpoint):
    """One server for the module's classes: the tiny BERT, classes in its memory."""
    env = {MODEL_DIRS_ENV: str(tiny_checkpoint), DEFAULT_MODEL_ENV: str(tiny_checkpoint), STORE_ENV: "memory"}
    with streamlit_server(APP, env=env) as url:
        yield url


def test_a_head_reruns_the_followers_view_alone_and_a_text_or_the_end_the_whole_page(class_server):
    asyncio.run(_teach_and_follow(class_server))


async def _teach_and_follow(base_url: str) -> None:
    teacher = await WebsocketSession.connect(base_url, {"teach": "1", "text": FOLLOW_TEXT})
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


def test_a_click_on_a_head_in_the_grid_answers_which_head_and_keeps_the_student_following(class_server):
    asyncio.run(_click_to_answer(class_server))


async def _click_to_answer(base_url: str) -> None:
    query = {"teach": "1", "text": CLICK_TEXT, "view": "heads", "layer": "1"}
    teacher = await WebsocketSession.connect(base_url, query)
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


def test_a_hundred_followers_answer_at_once_and_every_vote_counts_once(class_server):
    asyncio.run(_a_class_votes(class_server))


async def _a_class_votes(base_url: str) -> None:
    teacher = await WebsocketSession.connect(base_url, {"teach": "1", "text": VOTE_TEXT})
    voters = await voting.join_all(base_url, class_code(teacher), FOLLOWERS)
    try:
        await voting.ask(teacher)
        await asyncio.gather(*(voting.hear(voter) for voter in voters))
        choices = voting.choices(voters[0].session)
        picked = random.Random(0)
        await asyncio.gather(*(voting.vote(voter, picked.randrange(choices)) for voter in voters))
        # A vote reruns the question's card alone, not the view around it: a hundred of those fit in a second.
        assert voters[0].session.ran_fragment_alone and voters[0].session.last_drawn < CARD_MOST, \
            f"a vote drew {voters[0].session.last_drawn} elements"

        counts = [await voting.read_count(teacher) for _ in range(COUNT_TRIES)]
        assert counts[-1] == FOLLOWERS, f"the teacher's count read {counts}"
        assert counts == sorted(counts)

        changed, reloaded = voters[0], voters[1]
        await voting.vote(changed, (changed.votes[-1][1] + 1) % choices)
        again = await voting.join(base_url, class_code(teacher), reloaded.voter)  # the same browser reopens the page
        voters.append(again)
        await voting.hear(again)
        await voting.vote(again, (reloaded.votes[-1][1] + 1) % choices)
        reloaded.votes.append(again.votes[-1])
        assert await voting.read_count(teacher) == FOLLOWERS, "a change of mind or a reload added a vote"

        await voting.close_and_reveal(teacher)
        shown = voting.revealed_votes(teacher)
        last = Counter(voter.votes[-1][1] for voter in voters if voter is not again)
        assert shown == [last[position] for position in range(choices)]
        assert not teacher.errors()
        assert not any(voter.session.errors() for voter in voters)
    finally:
        await asyncio.gather(teacher.close(), *(voter.session.close() for voter in voters))
