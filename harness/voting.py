"""A class answering its teacher's question through the page, over Streamlit's websocket (harness/session_client.py):
what a teacher's page and its students' pages send and read, for the load test and the bench of a class voting at
once (tests/deploy/test_class_over_websocket.py, bench/class_votes_page.py).

Each follower's page is a session that carries its browser's voter cookie (components/classroom/questions.py), hears
of the class's moves as its watch would (one trigger), and answers by picking a choice of the question's pills. The
teacher's page asks the view's first question (which key a token attends to most), reads its count of answers by
rerunning the round's fragment as the browser does every COUNT_S, closes the round and reveals; the revealed votes
are read from the answers chart's data, as the browser draws them.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from dataclasses import dataclass, field

import pyarrow as pa

from components.classroom.questions import VOTER_COOKIE
from harness.following import WATCH
from harness.session_client import WebsocketSession

ANSWERED = re.compile(r"\*\*(\d+)\*\* answered")
COUNT_KEY, COUNT_KIND = "quiz_close", "button"  # an element of the teacher's live round, in its timed fragment
JOIN_AT_ONCE = 8  # followers opening their page together: a class arrives over a minute, not in one instant


@dataclass
class Voter:
    session: WebsocketSession
    voter: str
    votes: list[tuple[float, int]] = field(default_factory=list)  # (when its run finished, the choice's position)


async def join(base_url: str, code: str, voter: str | None = None) -> Voter:
    """A follower's page opened; voter: the browser's cookie (a new browser's by default)."""
    voter = voter or secrets.token_urlsafe(16)  # as voter.js makes it: 128 random bits, 22 characters
    session = await WebsocketSession.connect(base_url, {"class": code}, cookies={VOTER_COOKIE: voter})
    return Voter(session, voter)


async def join_all(base_url: str, code: str, followers: int) -> list[Voter]:
    gate = asyncio.Semaphore(JOIN_AT_ONCE)

    async def one() -> Voter:
        async with gate:
            return await join(base_url, code)

    return list(await asyncio.gather(*(one() for _ in range(followers))))


async def ask(teacher: WebsocketSession) -> None:
    """The teacher asks the view's first question, on the token its controls stand at."""
    await teacher.press_button("quiz_ask")


async def hear(voter: Voter) -> None:
    """The follower's watch heard the class move: the run it asks for draws the question."""
    await voter.session.send_trigger(WATCH, "behind")


def pills_key(session: WebsocketSession) -> str:
    """The key of the pills of the question on a follower's page (question and round in it)."""
    keys = [key for key in session.widget_keys() if key.startswith("quiz_vote_")]
    assert keys, f"no question to answer on the page: {session.texts()}"
    return keys[-1]


def choices(session: WebsocketSession) -> int:
    """How many choices the question on a follower's page offers."""
    return len(session.options(pills_key(session)))


async def vote(voter: Voter, position: int) -> None:
    """Pick the choice at position (the pills show each as Markdown that reads as its words)."""
    key = pills_key(voter.session)
    await voter.session.set_choice(key, voter.session.options(key)[position])
    voter.votes.append((time.monotonic(), position))


def answered(teacher: WebsocketSession) -> int:
    for text in teacher.texts():
        if found := ANSWERED.search(text):
            return int(found.group(1))
    raise AssertionError(f"the teacher's page shows no count of answers: {teacher.texts()}")


async def read_count(teacher: WebsocketSession) -> int:
    """The teacher's count as its round's fragment draws it again (every COUNT_S in the browser)."""
    await teacher.rerun_fragment_of(COUNT_KEY, COUNT_KIND)
    return answered(teacher)


async def close_and_reveal(teacher: WebsocketSession) -> None:
    await teacher.press_button("quiz_close")
    await teacher.press_button("quiz_reveal")


def revealed_votes(session: WebsocketSession) -> list[int]:
    """Round 1's votes per choice, in the choices' order, as the page's answers chart draws them."""
    for chart in session.charts().values():
        for payload in [chart.data.data, *(dataset.data.data for dataset in chart.datasets)]:
            rows = pa.ipc.open_stream(payload).read_all().to_pylist() if payload else []
            if rows and {"round", "position", "votes"} <= rows[0].keys():
                first = sorted((row["position"], row["votes"]) for row in rows if row["round"] == "Round 1")
                return [votes for _, votes in first]
    raise AssertionError("no answers chart on the page")
