"""A class over Streamlit's websocket: one teacher's session that moves the head, and followers that keep the
page's watch as the browser does (session_client.py), so that thirty followers cost the server what thirty
browsers cost it and the client machine almost nothing.

A follower does what its page's script does (components/classroom/class_watch.py): it asks the App's route
/api/class for the class's version, giving the version it last heard of, which the route holds until the class
moves on (harness/held_asks.py: many asks held at once from one thread), saying it is there with every ask; it asks
again at once after an ask the route held, after the watch's period after any other; and it sends the script's
trigger when the page is behind (which reruns the page, and starts the asks again from the version it shows);
after every run it reads the head its heatmap stands at (where the chart's own head input starts, in the spec the
server sent) and keeps the time whenever that changed. The teacher's change -> a follower's heatmap is the first
time that follower shows the head the teacher moved to; the browser's drawing of it (tens of ms) is not in the
figure.

Used by bench/class_follow.py, which prints the figures.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.parse
from dataclasses import dataclass, field

from components.classroom.class_watch import ASK_AGAIN_MS, WATCH_KEY
from harness.classroom import CHART, move_on_chart
from harness.held_asks import get_json
from harness.session_client import WebsocketSession

WATCH = WATCH_KEY  # the watch component's key and the end of its name
TEACHER_PERIOD_S = 2.0
HEADS = 12  # the bundled model's


@dataclass
class Follower:
    session: WebsocketSession
    base_url: str
    seen: list[tuple[float, int | None]] = field(default_factory=list)  # (time, head) whenever the head shown moved
    errors: list[str] = field(default_factory=list)
    polls: int = 0
    runs: list[tuple[float, float]] = field(default_factory=list)  # (asked for, finished) of each run the watch asked


@dataclass
class Change:
    at: float  # time.monotonic() just before the teacher's move was sent
    head: int
    sent_by: float = float("inf")  # when the teacher's run finished: it sent the view to the class before that


def shown_head(session: WebsocketSession) -> int | None:
    """The head the one-head heatmap stands at (None without one): where its own head input starts."""
    chart = session.charts().get(CHART)
    if chart is None:
        return None
    for param in json.loads(chart.spec).get("params", ()):
        if param.get("name") == "head" and "select" in param:
            return int(param["value"][0]["head"])
    return None


def class_code(session: WebsocketSession) -> str:
    return urllib.parse.parse_qs(session.query_string)["class"][-1]


async def join(base_url: str, code: str, delay_s: float = 0.0) -> Follower:
    await asyncio.sleep(delay_s)
    follower = Follower(await WebsocketSession.connect(base_url, {"class": code}), base_url)
    follower.seen.append((time.monotonic(), shown_head(follower.session)))
    follower.errors.extend(follower.session.errors())
    return follower


def watch_data(session: WebsocketSession) -> dict | None:
    """The data the page's last run gave its class watch (None: the page follows no class)."""
    for element in session.elements():
        if element.WhichOneof("type") == "bidi_component" and element.bidi_component.component_name.endswith(WATCH):
            return json.loads(element.bidi_component.json)
    return None


async def keep_polling(follower: Follower, until: float, phase: float = 0.0) -> None:
    """Ask the route as the page's watch does, until time.monotonic() reaches until. phase (0 to 1) of the watch's
    period: when this follower's first ask goes (browsers that opened the page at different moments)."""
    watch = watch_data(follower.session)
    if watch is None:
        follower.errors.append("the page has no class watch: it does not follow a class")
        return
    await asyncio.sleep(phase * watch["period_ms"] / 1000)
    heard, asked_at = watch["version"], float("-inf")
    while time.monotonic() < until:
        latest = watch_data(follower.session) or watch  # the last run's: the version the page shows
        if latest["run"] != watch["run"]:  # a new run starts the page's script again
            watch, heard, asked_at = latest, latest["version"], float("-inf")
        query = urllib.parse.urlencode({"code": watch["code"], **({} if heard is None else {"version": heard}),
                                        **({"beat": watch["beat"]} if watch["beat"] else {})})
        try:
            status, answer = await asyncio.wait_for(get_json(f"{follower.base_url}/api/class?{query}"),
                                                    until - time.monotonic())
        except TimeoutError:
            return
        except Exception as error:  # noqa: BLE001 (counted and reported with the figures)
            follower.errors.append(f"poll: {error!r}")
            return
        follower.polls += 1
        reachable = status == 200 and answer["reachable"]
        heard = answer["version"] if reachable else heard
        behind = status != 200 or reachable != watch["reachable"] or reachable and (answer["version"] is None or (
            watch["following"] and answer["version"] != watch["version"]))
        if behind and time.monotonic() - asked_at > ASK_AGAIN_MS / 1000:
            asked_at = time.monotonic()
            await follower.session.send_trigger(WATCH, "behind")  # returns once the run it asked for finished
            follower.runs.append((asked_at, time.monotonic()))
        follower.errors.extend(follower.session.errors())
        head = shown_head(follower.session)
        if head != follower.seen[-1][1]:
            follower.seen.append((time.monotonic(), head))
        if not (status == 200 and answer.get("waited") is True) or heard is None:
            await asyncio.sleep(watch["period_ms"] / 1000)


async def teach(teacher: WebsocketSession, until: float, period_s: float = TEACHER_PERIOD_S) -> list[Change]:
    """Move the teacher's head one step every period_s until until; return when each move was sent."""
    changes = []
    head = shown_head(teacher) or 0
    next_at = time.monotonic()
    while next_at + period_s < until:
        next_at += period_s
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        head = (head + 1) % HEADS
        changes.append(Change(time.monotonic(), head))
        await move_on_chart(teacher, "head", head)
        changes[-1].sent_by = time.monotonic()
    return changes


def latencies(changes: list[Change], follower: Follower) -> tuple[list[float], list[str]]:
    """Seconds from each change to the follower first showing its head; a change it never showed is an error."""
    found, missed = [], []
    for index, change in enumerate(changes):
        before = changes[index + 1].at if index + 1 < len(changes) else float("inf")
        shown = [at for at, head in follower.seen if head == change.head and change.at <= at]
        if shown and shown[0] < before + TEACHER_PERIOD_S:
            found.append(shown[0] - change.at)
        else:
            missed.append(f"never showed head {change.head} (the teacher's change {index + 1})")
    return found, missed
