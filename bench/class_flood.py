"""What a stranger's polls leave in the class store: random class codes and beats, as plain GETs of /api/class send
them, straight to the store (components/server/class_store.py), in a real redis-server and in memory.

For each store: one live class with one follower (a student); then COUNT polls for random codes, each with a random
beat, and COUNT random beats on the live class's code, the student polling between them (a poll that loses the
class stops the bench). Printed: the keys in Redis after each flood (DBSIZE), the bytes the memory store kept
(tracemalloc, after each flood against before it), and the followers the teacher's page would count.

    python -m bench.class_flood [count]      (default 2,000)

Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

import redis as redis_client

from components.server.class_store import MemoryStore, new_code
from components.server.class_store_redis import RedisStore
from harness.allocations import bytes_kept
from harness.redis import redis_server

VIEW = {"text": "the class keeps following", "head": "3"}


def strangers(store, count: int) -> tuple[str, str, Callable[[], None], Callable[[], None]]:
    """A live class, its student, and the two floods: count random codes with beats, count random beats on the
    class (the student polling between them, as a follower does)."""
    code, _ = store.create(VIEW)
    student = secrets.token_hex(8)
    store.version(code, student)

    def random_codes() -> None:
        for stranger_code in (new_code() for _ in range(count)):
            if stranger_code != code:
                store.version(stranger_code, secrets.token_hex(8))

    def random_beats() -> None:
        for _ in range(count):
            store.version(code, secrets.token_hex(8))
            if store.version(code, student) is None:
                raise RuntimeError("the live class was lost in the flood")

    return code, student, random_codes, random_beats


def memory_figures(count: int) -> dict[str, int]:
    store = MemoryStore()
    code, _, random_codes, random_beats = strangers(store, count)
    return {"bytes kept after the random codes": bytes_kept(random_codes),
            "bytes kept after the random beats on the class": bytes_kept(random_beats),
            "followers counted": store.followers(code)}


def redis_figures(count: int) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as folder, redis_server(Path(folder)) as server:
        check = redis_client.Redis.from_url(server.url)
        store = RedisStore(server.url)
        code, _, random_codes, random_beats = strangers(store, count)
        figures = {"keys before (the class and its student)": check.dbsize()}
        random_codes()
        figures["keys after the random codes"] = check.dbsize()
        random_beats()
        figures["keys after the random beats on the class"] = check.dbsize()
        figures["followers counted"] = store.followers(code)
        figures["heartbeats held for the class"] = check.zcard(RedisStore.PREFIX + code + ":followers")
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, nargs="?", default=2000)
    count = parser.parse_args().count
    for store, figures in (("memory", memory_figures(count)), ("redis", redis_figures(count))):
        print(f"{store}, {count:,} random codes with beats, then {count:,} random beats on a live class:")
        for name, value in figures.items():
            print(f"  {name}: {value:,}")


if __name__ == "__main__":
    main()
