"""What a stranger's polls leave in the class store: random class codes and beats, as plain GETs of /api/class send
them, straight to the store (components/classroom/class_store.py), in a real redis-server and in memory.

For each store: one live class with one follower; then COUNT polls for random codes, each with a random beat, and
COUNT random beats on the live class's code. Printed: the keys in Redis before and after (DBSIZE), the bytes the
memory store kept (tracemalloc, after the flood against before it), the followers the teacher's page would count,
and whether the real follower's poll still read the class's version all along.

    python -m bench.class_flood [count]      (default 2,000)

Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import secrets
import tempfile
import tracemalloc
from pathlib import Path

import redis as redis_client

from components.classroom.class_store import MemoryStore, RedisStore, new_code
from harness.redis import redis_server

VIEW = {"text": "the class keeps following", "head": "3"}


def flood(store, count: int) -> dict[str, object]:
    """Send count random codes with random beats and count random beats on a live class; what the class saw."""
    code, _ = store.create(VIEW)
    student = secrets.token_hex(8)
    store.version(code, student)
    versions_read = 0
    for _ in range(count):
        stranger_code = new_code()
        if stranger_code != code:
            store.version(stranger_code, secrets.token_hex(8))
        store.version(code, secrets.token_hex(8))
        versions_read += store.version(code, student) is not None
    return {"followers counted": store.followers(code), "student's polls that read the version": versions_read}


def memory_figures(count: int) -> dict[str, object]:
    store = MemoryStore()
    store.create(VIEW)  # the store's first class: its lasting structures exist before the measure
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    seen = flood(store, count)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {**seen, "bytes kept by the store after the flood": after - before}


def redis_figures(count: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder, redis_server(Path(folder)) as server:
        check = redis_client.Redis.from_url(server.url)
        before = check.dbsize()
        seen = flood(RedisStore(server.url), count)
        return {**seen, "keys in Redis before": before, "keys in Redis after": check.dbsize()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, nargs="?", default=2000)
    count = parser.parse_args().count
    for store, figures in (("memory", memory_figures(count)), ("redis", redis_figures(count))):
        print(f"{store}, {count:,} random codes with beats and {count:,} random beats on a live class:")
        for name, value in figures.items():
            print(f"  {name}: {value:,}" if isinstance(value, int) else f"  {name}: {value}")


if __name__ == "__main__":
    main()
