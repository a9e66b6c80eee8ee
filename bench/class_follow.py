"""A class that follows its teacher: the teacher's change -> the followers' heatmaps, where that time goes, and the
server's CPU for followers that only wait.

Opens a teacher's session (?teach=1) and FOLLOWERS sessions with the class's link, over Streamlit's websocket
(harness/following.py: each follower asks the App's route as the page's watch does, the asks held by the server
until the class moves). Thirty real Chromium pages would cost the 2 cores more than the server's own work (each
page's renderer draws every run) and measure the browsers; the pages' own script is the one fetch loop, which
tests/deploy/test_class_push.py runs in Chromium, and bench/class_busy_follow.py times two real pages. Then:

1. idle: IDLE_S seconds in which nobody moves; the server's CPU (user + system, /proc) as a share of one core,
   and per ask. Reference, measured first in the same run: the same server with the same number of pages open
   that are in no class (they have no watch), for as long;
2. teaching: the teacher moves the head on its heatmap every 2 s for DURATION_S seconds; for every change and
   every follower, the time from sending the teacher's move to that follower's page showing the head (its run
   finished, the heatmap's spec at the new head): p50 / p95 / max, and errors (a run that failed, an error on a
   page, a change a follower never showed). Where it goes: the teacher's run (which sends the view to the class
   before its chart), the move -> the follower's watch asking for its run (hearing of it), and that run.

With --redis, a real redis-server (Debian's) and two replicas that share it (ATTENTION_ANATOMY_CLASS_STORE): the
teacher on one replica, every follower on the other; the idle CPU is the followers' replica's.

    python -m bench.class_follow [followers] [duration_s]      (defaults: 30 followers, 60 s)
    python -m bench.class_follow --redis

Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench.report import machine
from components.server.class_store import STORE_ENV
from harness.following import Change, Follower, join, keep_polling, latencies, teach
from harness.following import class_code as code_of
from harness.redis import redis_server
from harness.server import APP, cpu_seconds, port_of, server_pid, streamlit_server
from harness.session_client import WebsocketSession

IDLE_S = 20.0
SETTLE_S = 3.0
JOIN_SPACING_S = 0.1
TEXT = "the teacher moves one head and the class follows"
TARGETS = {"latency_s": {"memory": 1.0, "redis": 1.0}, "idle_cpu": 0.10}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


async def idle_cpu(pid: int, seconds: float) -> float:
    """The server's CPU over seconds, as a share of one core."""
    before = cpu_seconds(pid)
    await asyncio.sleep(seconds)
    return (cpu_seconds(pid) - before) / seconds


async def reference_cpu(base_url: str, pid: int, count: int) -> float:
    """count pages in no class, open and idle: what the server spends without a poll."""
    sessions = [await WebsocketSession.connect(base_url, {"text": TEXT}) for _ in range(count)]
    await asyncio.sleep(SETTLE_S)
    share = await idle_cpu(pid, IDLE_S)
    await asyncio.gather(*(session.close() for session in sessions))
    return share


async def run(teacher_url: str, follower_url: str, followers_pid: int, count: int, duration_s: float) -> dict:
    reference = await reference_cpu(follower_url, followers_pid, count)
    teacher = await WebsocketSession.connect(teacher_url, {"teach": "1", "text": TEXT})
    code = code_of(teacher)
    followers: list[Follower] = list(await asyncio.gather(
        *(join(follower_url, code, index * JOIN_SPACING_S) for index in range(count))))
    idle_until = time.monotonic() + SETTLE_S + IDLE_S
    phases = random.Random(0)
    polling = [asyncio.create_task(keep_polling(follower, idle_until + 2 + duration_s + 3, phases.random()))
               for follower in followers]
    await asyncio.sleep(SETTLE_S)
    polls_before = sum(follower.polls for follower in followers)
    idle = await idle_cpu(followers_pid, IDLE_S)
    idle_polls = sum(follower.polls for follower in followers) - polls_before
    await asyncio.sleep(2)
    teaching_cpu_before, teaching_began = cpu_seconds(followers_pid), time.monotonic()
    changes = await teach(teacher, time.monotonic() + duration_s)
    teaching_cpu = (cpu_seconds(followers_pid) - teaching_cpu_before) / (time.monotonic() - teaching_began)
    await asyncio.gather(*polling)
    found, errors = [], []
    for index, follower in enumerate(followers):
        seconds, missed = latencies(changes, follower)
        found += seconds
        errors += [f"follower {index}: {error}" for error in [*follower.errors, *missed]]
    heard, reruns = where_it_goes(changes, followers)
    errors += [f"teacher: {error}" for error in teacher.errors()]
    await asyncio.gather(teacher.close(), *(follower.session.close() for follower in followers))
    return {"reference": reference, "idle": idle, "idle_polls": idle_polls, "teaching_cpu": teaching_cpu,
            "changes": len(changes), "latencies": found, "errors": errors, "heard": heard, "reruns": reruns,
            "teacher_runs": [change.sent_by - change.at for change in changes]}


def where_it_goes(changes: list[Change], followers: list[Follower]) -> tuple[list[float], list[float]]:
    """For every change and follower that showed it: seconds from the move to the watch asking for the run that
    showed it, and that run's own."""
    heard, reruns = [], []
    for follower in followers:
        for index, change in enumerate(changes):
            until = changes[index + 1].at if index + 1 < len(changes) else float("inf")
            runs = [(asked, done) for asked, done in follower.runs if change.at <= asked < until]
            shown = [at for at, head in follower.seen if head == change.head and change.at <= at]
            if runs and shown:
                asked, done = next(((asked, done) for asked, done in runs if done >= shown[0] - 0.001), runs[0])
                heard.append(asked - change.at)
                reruns.append(done - asked)
    return heard, reruns


def spread(values: list[float]) -> str:
    """p50 / p95 in ms."""
    if not values:
        return "none"
    return f"{statistics.median(values) * 1000:.0f} / {percentile(values, 0.95) * 1000:.0f} ms"


def report(figures: dict, store: str, count: int, duration_s: float) -> str:
    found = figures["latencies"]
    target_s = TARGETS["latency_s"][store]
    p95 = percentile(found, 0.95) if found else float("nan")
    per_poll_ms = figures["idle"] * IDLE_S / max(figures["idle_polls"], 1) * 1000
    where = "one server" if store == "memory" else "two replicas sharing Redis (teacher on one, followers on the other)"
    lines = [
        f"### {count} followers, {where}",
        "",
        "| | figure | target |",
        "|---|---|---|",
        f"| teacher's change -> follower's heatmap, p50 / p95 / max ({len(found)} of "
        f"{figures['changes'] * count}) | {statistics.median(found) * 1000:.0f} / {p95 * 1000:.0f} / "
        f"{max(found) * 1000:.0f} ms | p95 <= {target_s:g} s: {'met' if p95 <= target_s else '**not met**'} |",
        f"| where it goes, p50 / p95: the teacher's run (it sends the view first) | {spread(figures['teacher_runs'])} "
        "| |",
        f"| the move -> the follower's watch asks for its run | {spread(figures['heard'])} | |",
        f"| the follower's run | {spread(figures['reruns'])} | |",
        f"| errors | {len(figures['errors'])} | 0 |",
        f"| server CPU, {count} idle followers | {figures['idle'] * 100:.1f} % of a core "
        f"({figures['idle_polls'] / IDLE_S:.0f} asks a second, {per_poll_ms:.1f} ms each) | <= 10 %: "
        f"{'met' if figures['idle'] <= TARGETS['idle_cpu'] else '**not met**'} |",
        f"| reference: {count} pages in no class, idle | {figures['reference'] * 100:.1f} % of a core | |",
        f"| server CPU while the teacher changes the head every 2 s for {duration_s:.0f} s | "
        f"{figures['teaching_cpu'] * 100:.0f} % of a core | |",
    ]
    lines += [f"- {error}" for error in figures["errors"][:10]]
    return "\n".join(lines)


def class_servers(stack: ExitStack, redis: bool) -> tuple[str, str]:
    """The teacher's server and the followers': one server with classes in its memory, or (redis) two replicas
    sharing a real redis-server; closed with stack."""
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
    if not redis:
        url = stack.enter_context(streamlit_server(APP, log_path=folder / "server.log"))
        return url, url
    env = {STORE_ENV: stack.enter_context(redis_server(folder / "redis")).url}
    teacher_url, follower_url = (stack.enter_context(streamlit_server(APP, env=env, log_path=folder / name))
                                 for name in ("teacher.log", "followers.log"))
    return teacher_url, follower_url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("followers", nargs="?", type=int, default=30)
    parser.add_argument("duration_s", nargs="?", type=float, default=60.0)
    parser.add_argument("--redis", action="store_true", help="two replicas sharing a real redis-server")
    arguments = parser.parse_args()
    load_at_start, began = os.getloadavg(), time.monotonic()
    with ExitStack() as stack:
        teacher_url, follower_url = class_servers(stack, arguments.redis)
        figures = asyncio.run(run(teacher_url, follower_url, server_pid(port_of(follower_url)), arguments.followers,
                                  arguments.duration_s))
    store = "redis" if arguments.redis else "memory"
    print(report(figures, store, arguments.followers, arguments.duration_s))
    print()
    print(machine(load_at_start, None, time.monotonic() - began))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
