"""A class's store on a real server, tried as a stranger tries it: pages opened with ?teach=1 from one address, over
Streamlit's websocket, and plain GETs of /api/class with random codes and beats, no page open.

The address is the one a proxy on loopback says (X-Forwarded-For), as deploy/nginx.conf sends it: the server
(uvicorn) takes it for the page's, which the page counts against the memory store's cap of classes per address.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import urllib.request

import pytest
import redis as redis_client

from components.caches.offered import MODEL_DIRS_ENV
from components.page.page_state import DEFAULT_MODEL_ENV
from components.server.class_openers import MAX_CLASSES_PER_ADDRESS
from components.server.class_store import STORE_ENV, RedisStore, new_code
from harness.redis import redis_server
from harness.server import APP, streamlit_server
from harness.session_client import open_session

pytestmark = pytest.mark.deploy

STRANGER, NEIGHBOUR = "203.0.113.7", "203.0.113.8"  # documentation addresses (RFC 5737)
STRANGERS = 2000  # the flood


def server_env(tiny_checkpoint, store: str) -> dict[str, str]:
    """The tiny checkpoint as the default model (a page's run in a few hundred ms), and the class store."""
    return {MODEL_DIRS_ENV: str(tiny_checkpoint), DEFAULT_MODEL_ENV: str(tiny_checkpoint), STORE_ENV: store}


async def open_class(base_url: str, address: str) -> tuple[str | None, list[str]]:
    """Open a page with ?teach=1 from address: the class's code if one opened, and what the page says."""
    async with open_session(base_url, {"teach": "1"}, forwarded_for=address) as page:
        query = dict(pair.split("=", 1) for pair in page.query_string.split("&") if "=" in pair)
        return query.get("class"), page.texts()


def test_one_address_opens_no_more_than_its_share_of_classes(tiny_checkpoint):
    async def visit(base_url: str) -> None:
        for _ in range(MAX_CLASSES_PER_ADDRESS):
            code, texts = await open_class(base_url, STRANGER)
            assert code is not None, texts
        code, texts = await open_class(base_url, STRANGER)
        assert code is None
        assert any("cannot be started right now" in text and "from your address" in text for text in texts), texts
        code, texts = await open_class(base_url, NEIGHBOUR)
        assert code is not None, texts

    with streamlit_server(APP, env=server_env(tiny_checkpoint, "memory")) as base_url:
        asyncio.run(visit(base_url))


def poll(base_url: str, code: str, beat: str) -> dict:
    """GET /api/class as a follower's page, or anyone, sends it."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    with opener.open(f"{base_url}/api/class?code={code}&beat={beat}", timeout=30) as answer:
        return json.loads(answer.read())


@pytest.mark.needs("redis-server")
def test_random_polls_of_the_class_route_leave_no_key_in_redis(tiny_checkpoint, tmp_path):
    with redis_server(tmp_path) as redis, streamlit_server(APP, env=server_env(tiny_checkpoint, redis.url)) as url:
        store, check = RedisStore(redis.url), redis_client.Redis.from_url(redis.url)
        code, _ = store.create({"text": "the class keeps following"})
        follower = secrets.token_hex(8)
        for _ in range(STRANGERS):
            assert poll(url, new_code(), secrets.token_hex(8)) == {"reachable": True, "version": None}
            assert poll(url, code, follower) == {"reachable": True, "version": 1}
        assert sorted(check.scan_iter()) == sorted([(RedisStore.PREFIX + code).encode(),
                                                    (RedisStore.PREFIX + code + ":followers").encode()])
        assert store.followers(code) == 1
