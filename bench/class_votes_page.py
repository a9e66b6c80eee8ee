"""A class of followers answering its teacher's question at once, through the page: the bundled model on a real
server, over Streamlit's websocket (harness/voting.py), where bench/class_votes.py times the store alone.

The teacher's page asks (which key a token attends to most); FOLLOWERS pages, each with its own browser's voter
cookie, hear of it by their watch's trigger and answer together (one pick of the question's pills each, all sent at
once); meanwhile the teacher's page reads its count every COUNT_S, by rerunning its round's fragment as the browser
does. Then each follower changes its mind once, the teacher closes the round and reveals.

Printed: votes sent and counted, the revealed bars against each follower's last choice, each vote's run (the page's
run that wrote it: p50 / p95 / max, queued with the class's others), how long the last of the class's votes took to
be in, and how long after a vote's run finished the teacher's count first included it (p50 / p95 / max; the
teacher's read period bounds it).

    python -m bench.class_votes_page [followers] [--redis]      (default 100 followers, one server)

With --redis, a real redis-server and two replicas that share it: the teacher on one, every follower on the other.
Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from collections import Counter
from contextlib import ExitStack

from bench.class_follow import class_servers, percentile
from bench.class_votes import count_waits
from bench.report import machine
from components.server.question_store import COUNT_S
from harness import voting
from harness.following import class_code
from harness.server import cpu_seconds, port_of, server_pid
from harness.session_client import WebsocketSession

TEXT = "the teacher asks and the whole class answers at once"
TARGET_S = 1.0  # the teacher's count current within this long of a vote, at p95


async def keep_reading(teacher: WebsocketSession, reads: list[tuple[float, int]], until: asyncio.Event) -> None:
    """The teacher's page's timed fragment: its count every COUNT_S, as (time the read finished, count)."""
    while True:
        finished = until.is_set()
        count = await voting.read_count(teacher)
        reads.append((time.monotonic(), count))
        if finished:
            return
        await asyncio.sleep(COUNT_S)


async def timed_vote(voter: voting.Voter, position: int, runs: list[float]) -> None:
    started = time.monotonic()
    await voting.vote(voter, position)
    runs.append(time.monotonic() - started)


async def run(teacher_url: str, follower_url: str, count: int) -> dict:
    teacher = await WebsocketSession.connect(teacher_url, {"teach": "1", "text": TEXT})
    joined_at = time.monotonic()
    voters = await voting.join_all(follower_url, class_code(teacher), count)
    joining_s = time.monotonic() - joined_at
    await voting.ask(teacher)
    await asyncio.gather(*(voting.hear(voter) for voter in voters))
    choices, picked = voting.choices(voters[0].session), random.Random(0)
    reads, done, runs = [], asyncio.Event(), []
    reader = asyncio.create_task(keep_reading(teacher, reads, done))
    sent_at, server_cpu, own_cpu = time.monotonic(), cpu_seconds(server_pid(port_of(follower_url))), time.process_time()
    await asyncio.gather(*(timed_vote(voter, picked.randrange(choices), runs) for voter in voters))
    all_in_s = time.monotonic() - sent_at
    server_cpu = cpu_seconds(server_pid(port_of(follower_url))) - server_cpu
    own_cpu = time.process_time() - own_cpu
    first_votes = [voter.votes[0][0] for voter in voters]
    await asyncio.gather(*(timed_vote(voter, picked.randrange(choices), []) for voter in voters))  # minds change
    done.set()
    await reader
    await voting.close_and_reveal(teacher)
    shown = voting.revealed_votes(teacher)
    last = Counter(voter.votes[-1][1] for voter in voters)
    errors = [*teacher.errors(), *(error for voter in voters for error in voter.session.errors())]
    await asyncio.gather(teacher.close(), *(voter.session.close() for voter in voters))
    return {"count": count, "joining_s": joining_s, "runs": runs, "all_in_s": all_in_s,
            "waits": count_waits(first_votes, reads), "last_count": max(count for _, count in reads),
            "revealed": shown, "expected": [last[position] for position in range(choices)], "errors": errors,
            "server_cpu": server_cpu, "own_cpu": own_cpu}


def report(figures: dict, where: str) -> str:
    waits, runs = figures["waits"], figures["runs"]
    p95 = percentile(waits, 0.95) if waits else float("nan")
    lines = [
        f"### {figures['count']} followers answering at once, {where}",
        "",
        "| | figure | target |",
        "|---|---|---|",
        f"| votes counted by the teacher's page | {figures['last_count']} of {figures['count']} | all |",
        f"| the revealed bars against each follower's last choice | {figures['revealed']} against "
        f"{figures['expected']} | equal: {'met' if figures['revealed'] == figures['expected'] else '**not met**'} |",
        f"| a vote's run, p50 / p95 / max | {statistics.median(runs) * 1000:.0f} / {percentile(runs, 0.95) * 1000:.0f}"
        f" / {max(runs) * 1000:.0f} ms | |",
        f"| the class's last vote in, from all sent at once | {figures['all_in_s'] * 1000:.0f} ms | |",
        f"| meanwhile: the followers' server's CPU; this client's (its 100 pages' messages read) | "
        f"{figures['server_cpu'] * 1000:.0f} ms; {figures['own_cpu'] * 1000:.0f} ms | |",
        f"| a vote -> the teacher's count including it, p50 / p95 / max ({len(waits)} of {figures['count']}; read "
        f"every {COUNT_S:g} s) | {statistics.median(waits) * 1000:.0f} / {p95 * 1000:.0f} / "
        f"{max(waits) * 1000:.0f} ms | p95 <= {TARGET_S:g} s: {'met' if p95 <= TARGET_S else '**not met**'} |",
        f"| errors | {len(figures['errors'])} | 0 |",
        f"| {figures['count']} followers' pages opened, {voting.JOIN_AT_ONCE} at a time | "
        f"{figures['joining_s']:.1f} s | |",
    ]
    lines += [f"- {error}" for error in figures["errors"][:10]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("followers", nargs="?", type=int, default=100)
    parser.add_argument("--redis", action="store_true", help="two replicas sharing a real redis-server")
    arguments = parser.parse_args()
    load_at_start, began = os.getloadavg(), time.monotonic()
    with ExitStack() as stack:
        teacher_url, follower_url = class_servers(stack, arguments.redis)
        figures = asyncio.run(run(teacher_url, follower_url, arguments.followers))
    where = "two replicas sharing Redis (teacher on one, followers on the other)" if arguments.redis else "one server"
    print(report(figures, where))
    print()
    print(machine(load_at_start, None, time.monotonic() - began))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
