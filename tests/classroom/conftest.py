"""The class stores' tests' shared fixtures: a real redis-server for the module, and fresh class stores of each kind
(in memory, and in that Redis when redis-server is installed)."""

from __future__ import annotations

import pytest

from components.server.class_store import MemoryStore
from components.server.class_store_redis import RedisStore
from harness.redis import redis_server
from tests.marks import NEEDS_REDIS


@pytest.fixture(scope="module")
def redis(tmp_path_factory):
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(params=["memory", pytest.param("redis", marks=NEEDS_REDIS)])
def make_store(request):
    """A factory of fresh class stores of one kind: make_store(lifetime_s=...)."""
    if request.param == "memory":
        return lambda **options: MemoryStore(**options)
    server = request.getfixturevalue("redis")
    return lambda **options: RedisStore(server.url, **options)
