"""What a stranger's polls can make the class store keep (components/server/class_store.py): nothing.

GET /api/class?code=CODE&beat=ID needs no page: anyone can send random codes and random heartbeat ids. Here they go
straight to the store, in a real redis-server (a fresh one for each test, so that its keys can be counted) and in
memory: a code that is no live class leaves no key and no byte, a live class counts at most MAX_FOLLOWERS, a class
that ended leaves nothing behind, and a class keeps being followed while a flood arrives at the Redis that
deploy/kubernetes.yaml provides, with a few hundred kB to spare, and once that Redis is full. Opening classes is
capped per address in memory, and no address is kept. The same through a real server:
tests/deploy/test_class_strangers.py.
"""

from __future__ import annotations

import ipaddress
import secrets
import threading
import time
from pathlib import Path

import pytest
import redis as redis_client
import yaml

from components.server.class_openers import MAX_CLASSES_PER_ADDRESS
from components.server.class_store import (
    MAX_FOLLOWERS,
    MemoryStore,
    StoreUnavailable,
    new_code,
)
from components.server.class_store_redis import RedisStore
from harness.allocations import bytes_kept
from harness.redis import redis_server
from tests.classroom.test_class_store import held_values
from tests.marks import NEEDS_REDIS

VIEW = {"text": "the class keeps following", "head": "3"}
STRANGERS = 2000  # the flood: random codes and beats, as plain GETs send them
FLOOD = 10_000  # random polls against a Redis with 0.5 MB to spare: a key of ~100 bytes each would fill it twice
KUBERNETES = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes.yaml"
# A store's own structures for one class with MAX_FOLLOWERS heartbeats: an id of 16 characters and a float each,
# in a dict; about 120 bytes a follower in CPython 3.11. What is kept beyond it grows with the flood.
BYTES_PER_FOLLOWER = 200
# What Python's own allocations move between two measures of tracemalloc around a flood that keeps nothing: tens of
# bytes. STRANGERS polls kept would be a hundred bytes and more each.
NOISE_BYTES = 1024


@pytest.fixture(params=["memory", pytest.param("redis", marks=NEEDS_REDIS)])
def store_and_leftovers(request, tmp_path):
    """(a fresh store, a function that says what a flood left in it: Redis's keys, or the bytes the memory store's
    process keeps beyond NOISE_BYTES). Measure what a call leaves with `leftovers(lambda: ...)`."""
    if request.param == "memory":
        store = MemoryStore()
        yield store, lambda flood: max(0, bytes_kept(flood) - NOISE_BYTES)
        return
    with redis_server(tmp_path) as server:
        check = redis_client.Redis.from_url(server.url)
        store = RedisStore(server.url)
        yield store, lambda flood: keys_added(check, flood)


def keys_added(check: redis_client.Redis, flood) -> int:
    before = live_keys(check)
    flood()
    return live_keys(check) - before


def live_keys(check: redis_client.Redis) -> int:
    """The keys Redis holds that have not expired: SCAN drops an expired key it meets, where DBSIZE still counts it
    until Redis's own sweep finds it."""
    return sum(1 for _ in check.scan_iter(count=1000))


def random_polls(store, count: int = STRANGERS, avoid: str = "") -> set[int | None]:
    """count polls for random codes (none of them avoid), each with a random heartbeat id; the versions they read."""
    codes = [code for code in (new_code() for _ in range(count)) if code != avoid]
    return {store.version(code, secrets.token_hex(8)) for code in codes}


def test_random_codes_and_beats_leave_nothing(store_and_leftovers):
    store, leftovers = store_and_leftovers
    read = set()
    assert leftovers(lambda: read.update(random_polls(store))) == 0
    assert read == {None}


def test_random_beats_on_a_live_class_count_no_more_than_the_cap(store_and_leftovers):
    store, leftovers = store_and_leftovers
    code, _ = store.create(VIEW)
    student = secrets.token_hex(8)
    store.version(code, student)

    def strangers_beat() -> None:
        for _ in range(STRANGERS):
            store.version(code, secrets.token_hex(8))
            assert store.version(code, student) == 1  # the student still reads the class all along

    kept = leftovers(strangers_beat)
    assert store.followers(code) == MAX_FOLLOWERS
    assert kept <= (0 if isinstance(store, RedisStore) else MAX_FOLLOWERS * BYTES_PER_FOLLOWER)


def test_a_beat_for_an_ended_class_leaves_nothing(store_and_leftovers):
    store, leftovers = store_and_leftovers
    code, key = store.create(VIEW)
    store.version(code, secrets.token_hex(8))
    assert store.end(code, key)
    assert leftovers(lambda: [store.version(code, secrets.token_hex(8)) for _ in range(STRANGERS)]) == 0
    assert store.version(code) is None and store.followers(code) == 0


@pytest.mark.needs("redis-server")
def test_a_classs_followers_end_with_it(tmp_path):
    """A class that ends by expiry, heartbeats sent until its last moment: nothing of it outlives it."""
    with redis_server(tmp_path) as server:
        check, lifetime_s = redis_client.Redis.from_url(server.url), 1.5
        store = RedisStore(server.url, lifetime_s=lifetime_s)
        code, _ = store.create(VIEW)
        time.sleep(lifetime_s / 2)
        store.version(code, secrets.token_hex(8))  # the class has half its life left; a heartbeat counts longer
        ends_at = check.pexpiretime  # Unix time in ms: both read as of one instant
        assert ends_at(RedisStore.PREFIX + code + ":followers") <= ends_at(RedisStore.PREFIX + code)
        while store.version(code) is not None:
            time.sleep(0.05)
        assert live_keys(check) == 0


@pytest.mark.needs("redis-server")
def test_a_class_keeps_being_followed_while_strangers_flood_the_provided_redis(tmp_path):
    """The Redis of deploy/kubernetes.yaml, with its eviction policy and only 0.5 MB to spare, which the flood's
    FLOOD polls would fill twice over if each left a key: the class is read and counted all along."""
    with redis_server(tmp_path) as server:
        check = redis_client.Redis.from_url(server.url)
        policy = kubernetes_redis_option("--maxmemory-policy")
        check.config_set("maxmemory-policy", policy)
        check.config_set("maxmemory", check.info("memory")["used_memory"] + 512 * 1024)
        teacher, student, stranger = (RedisStore(server.url) for _ in range(3))
        code, key = teacher.create(VIEW)
        follower, flooded, stop = secrets.token_hex(8), [], threading.Event()

        def flood() -> None:
            while not stop.is_set():
                flooded.append(random_polls(stranger, count=100, avoid=code))

        flooding = threading.Thread(target=flood, daemon=True)
        flooding.start()
        head = 0
        try:
            while len(flooded) < FLOOD // 100:
                head += 1
                assert teacher.publish(code, key, {**VIEW, "head": str(head)})
                for _ in range(20):  # the teacher talks; the class polls
                    assert student.version(code, follower) == head + 1, f"{policy}, after {100 * len(flooded)} polls"
                assert student.read(code).settings["head"] == str(head)
                assert teacher.followers(code) == 1
        finally:
            stop.set()
            flooding.join(timeout=10)
        assert live_keys(check) == 2  # the class and its one follower


def kubernetes_redis_option(name: str) -> str:
    """The value deploy/kubernetes.yaml gives redis-server's option name (its container's args)."""
    for document in yaml.safe_load_all(KUBERNETES.read_text()):
        if document and document["kind"] == "Deployment" and document["metadata"]["name"].endswith("-redis"):
            args = document["spec"]["template"]["spec"]["containers"][0]["args"]
            return args[args.index(name) + 1]
    raise LookupError(f"{KUBERNETES.name} has no Redis Deployment")


def test_one_address_cannot_fill_the_memory_store():
    store = MemoryStore()
    opened = [store.create(VIEW, address="203.0.113.7") for _ in range(MAX_CLASSES_PER_ADDRESS)]
    with pytest.raises(StoreUnavailable, match="from your address"):
        store.create(VIEW, address="203.0.113.7")
    with pytest.raises(StoreUnavailable, match="from your address"):  # the same host's other IPv6 addresses
        for suffix in range(MAX_CLASSES_PER_ADDRESS + 1):
            store.create(VIEW, address=f"2001:db8:0:1::{suffix:x}")
    assert store.create(VIEW, address="203.0.113.8")  # another address opens its own
    assert store.create(VIEW, address="2001:db8:0:2::1")  # another IPv6 network too
    code, key = opened[0]
    assert store.end(code, key)  # an ended class frees its place
    assert store.create(VIEW, address="203.0.113.7")


def test_a_class_that_ends_by_expiry_frees_its_openers_place():
    store = MemoryStore(lifetime_s=0.2)
    for _ in range(MAX_CLASSES_PER_ADDRESS):
        store.create(VIEW, address="198.51.100.1")
    time.sleep(0.3)
    assert store.create(VIEW, address="198.51.100.1")


def test_the_memory_store_keeps_no_address():
    """Not as text, not as the address's bytes, not as the bytes of its IPv6 network (what is counted)."""
    store = MemoryStore()
    addresses = ("203.0.113.7", "2001:db8:0:1::7")
    for address in addresses:
        store.create(VIEW, address=address)
    held = b"".join(value if isinstance(value, bytes) else value.encode() for value in held_values(store))
    for address in addresses:
        parsed = ipaddress.ip_address(address)
        forms = {address.encode(), parsed.exploded.encode(), parsed.packed, parsed.packed[:8]}
        assert not [form for form in forms if form in held], address


def test_pages_without_an_address_are_not_counted():
    """Loopback (Streamlit's None) and what is no address at all (AppTest's stand-in object) open classes freely:
    whoever is on the server's own machine runs it."""
    store = MemoryStore()
    for address in (None, "127.0.0.1", "::1", "not an address", object()):
        for _ in range(MAX_CLASSES_PER_ADDRESS + 1):
            store.create(VIEW, address=address)


@pytest.mark.needs("redis-server")
def test_a_full_redis_refuses_new_classes_and_keeps_following_the_live_ones(tmp_path):
    """The provided Redis's policy, past its maxmemory (here set to half what it holds, as a Redis filled by classes
    would be): writes that grow it are refused, and nothing live is dropped to make room."""
    with redis_server(tmp_path) as server:
        check, store = redis_client.Redis.from_url(server.url), RedisStore(server.url)
        code, key = store.create(VIEW)
        check.config_set("maxmemory-policy", kubernetes_redis_option("--maxmemory-policy"))
        check.config_set("maxmemory", check.info("memory")["used_memory"] // 2)
        with pytest.raises(StoreUnavailable):
            store.create(VIEW)
        assert store.version(code, secrets.token_hex(8)) == 1  # a new follower reads the class, uncounted
        assert store.read(code).settings == VIEW and store.teaches(code, key)
