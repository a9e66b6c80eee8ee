"""A class of 100 answering its teacher's question at once, through the page on a real server: every vote counted
once, a change of mind replacing its voter's vote, a reload adding none, the teacher's count reaching the class, and
the revealed bars equal to each voter's last choice. How fast the teacher's count follows is the bench's
(bench/class_votes_page.py), not a test's.

Over Streamlit's websocket (harness/voting.py): a hundred Chromium pages would cost the machine more than the
server's own work.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
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

FOLLOWERS = 100
TEXT = "the class answers its teacher at once"
CARD_MOST = 15  # elements and containers the question's card draws, at most
COUNT_TRIES = 20  # the teacher's count read again until it holds every vote: a run a read


def test_a_hundred_followers_answer_at_once_and_every_vote_counts_once(tiny_checkpoint):
    env = {MODEL_DIRS_ENV: str(tiny_checkpoint), DEFAULT_MODEL_ENV: str(tiny_checkpoint), STORE_ENV: "memory"}
    with ExitStack() as stack:
        base_url = stack.enter_context(streamlit_server(APP, env=env))
        asyncio.run(_a_class_votes(base_url))


async def _a_class_votes(base_url: str) -> None:
    teacher = await WebsocketSession.connect(base_url, {"teach": "1", "text": TEXT})
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
