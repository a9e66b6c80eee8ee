"""A class of followers answering the teacher's question at once, straight to the question store
(components/server/question_store.py, store-level: no HTTP, no page), in memory and in a real redis-server.

For each store: a class, a question, FOLLOWERS voter threads that answer together (a barrier), then each changes
their mind once at a random moment within CHANGE_S, as a class does while it discusses; meanwhile the teacher's
page reads its count of answers every COUNT_S, as its fragment does. In Redis, the voters write through
one store object and the teacher reads through another, as two replicas behind a proxy would. Then a second
round where the followers come in spread over SPREAD_S (reaction times), which gives every vote its own wait.

Printed per store and round: votes sent and accepted, the teacher's last count, the revealed counts' total and
whether they match each voter's last choice, and how long after a vote was accepted the teacher's count first
included it (median, p95, max; the teacher's read period bounds it), with each vote's own time in the store.

    python -m bench.class_votes [followers]      (default 100)

Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import secrets
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from components.caches.stores import questions_beside
from components.server.class_store import MemoryStore
from components.server.class_store_redis import RedisStore
from components.server.question_store import COUNT_S, Question, QuestionStore
from harness.redis import redis_server

CHOICES = ("It rises", "It falls", "It stays about the same")
QUESTION = Question("entropy", "What happens to the entropy when d_k doubles without the scaling?", CHOICES,
                    answer=1, why="computed")
CHANGE_S = 3.0  # each voter changes their mind once within this long of the first answer
SPREAD_S = 5.0  # the second round's voters come in over this long


@dataclass
class Round:
    sent: int = 0
    accepted: int = 0
    accepted_at: list[float] = field(default_factory=list)  # time.monotonic() of each first answer accepted
    store_s: list[float] = field(default_factory=list)  # each vote's call into the store
    last: dict[str, int] = field(default_factory=dict)  # voter -> last choice accepted
    lock: threading.Lock = field(default_factory=threading.Lock)

    def vote(self, store: QuestionStore, code: str, voter: str, choice: int, first: bool) -> None:
        started = time.monotonic()
        accepted = store.vote(code, voter, choice)
        done = time.monotonic()
        with self.lock:
            self.sent += 1
            self.store_s.append(done - started)
            if accepted:
                self.accepted += 1
                self.last[voter] = choice
                if first:
                    self.accepted_at.append(done)


def run_round(voters: QuestionStore, teacher: QuestionStore, code: str, key: str, followers: int,
              spread_s: float) -> tuple[Round, list[tuple[float, int]]]:
    """followers threads answer (at once, or over spread_s) and change their mind once; the teacher's reads of its
    count every COUNT_S, as (time, count), until every thread is done and one more read."""
    result, reads, done = Round(), [], threading.Event()
    barrier = threading.Barrier(followers)

    def follower() -> None:
        voter = secrets.token_urlsafe(16)
        barrier.wait()
        time.sleep(random.uniform(0, spread_s))
        result.vote(voters, code, voter, random.randrange(len(CHOICES)), first=True)
        time.sleep(random.uniform(0, CHANGE_S))
        result.vote(voters, code, voter, random.randrange(len(CHOICES)), first=False)

    def teacher_page() -> None:
        while True:
            finished = done.is_set()
            reads.append((time.monotonic(), teacher.answered(code, key)))
            if finished:
                return
            time.sleep(COUNT_S)

    threads = [threading.Thread(target=follower) for _ in range(followers)]
    reader = threading.Thread(target=teacher_page)
    reader.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()
    return result, reads


def count_waits(accepted_at: list[float], reads: list[tuple[float, int]]) -> list[float]:
    """For the k-th answer accepted, how long until a read of the teacher's count said k or more."""
    waits = []
    for rank, at in enumerate(sorted(accepted_at), start=1):
        shown = next((read_at for read_at, count in reads if read_at >= at and count >= rank), None)
        if shown is not None:
            waits.append(shown - at)
    return waits


def report(name: str, result: Round, reads: list[tuple[float, int]], counts: tuple[int, ...], followers: int) -> None:
    waits = sorted(count_waits(result.accepted_at, reads))
    tally = tuple(sum(1 for choice in result.last.values() if choice == index) for index in range(len(CHOICES)))
    p95 = waits[max(0, round(0.95 * len(waits)) - 1)] if waits else float("nan")
    store_ms = sorted(seconds * 1000 for seconds in result.store_s)
    print(f"  {name}: {followers} followers, {result.sent} votes sent, {result.accepted} accepted; the teacher's "
          f"last count {reads[-1][1]}; revealed {counts} (total {sum(counts)}), the voters' last choices {tally}: "
          f"{'the same' if counts == tally else 'DIFFERENT'}")
    print(f"    the teacher's count current after a vote: median {statistics.median(waits):.3f} s, p95 {p95:.3f} s, "
          f"max {waits[-1]:.3f} s over {len(waits)} votes (read every {COUNT_S} s); a vote in the store: median "
          f"{statistics.median(store_ms):.2f} ms, max {store_ms[-1]:.2f} ms")


def bench(voters: QuestionStore, teacher: QuestionStore, classes, followers: int) -> None:
    code, key = classes.create({})
    for name, spread_s in (("all at once", 0.0), (f"spread over {SPREAD_S:g} s", SPREAD_S)):
        teacher.ask(code, key, QUESTION)
        result, reads = run_round(voters, teacher, code, key, followers, spread_s)
        teacher.reveal(code, key)
        report(name, result, reads, teacher.current(code).counts[0], followers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("followers", type=int, nargs="?", default=100)
    followers = parser.parse_args().followers
    random.seed(0)
    print("memory store (one server):")
    classes = MemoryStore()
    store = questions_beside(classes)
    bench(store, store, classes, followers)
    with tempfile.TemporaryDirectory() as folder, redis_server(Path(folder)) as server:
        print("Redis (voters through one store, the teacher through another, as two replicas):")
        voters_classes = RedisStore(server.url)
        bench(questions_beside(voters_classes), questions_beside(RedisStore(server.url)), voters_classes, followers)


if __name__ == "__main__":
    main()
