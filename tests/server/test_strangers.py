"""What a stranger can make a fresh server do with plain GETs and no page open (components/api/routes.py).

The switch route used to take the model and the texts from its query: one GET with a text the server had not seen
ranked every head of it (13 s of a core and 1 GB). It now answers only for what a page of this server registered;
anything else is a 404 that costs a dictionary look-up. The figures (CPU and memory per request) are the bench's:
`python -m bench.strangers`."""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

import pytest

from attention.experiments.embedding_switch import DEFAULT_SECOND
from attention.models.model_list import BUNDLED_MODEL
from harness.server import APP, get_json, memory_mb, port_of, server_pid, streamlit_server, wait_until_warm

STRANGER_REQUESTS = 200
LASTING_MB = 30  # what the server's resident memory may grow by across them: allocator noise, no model


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory):
    """A server no page has visited, once its start's own import of torch is done (components/server/app_start.py)."""
    with streamlit_server(APP, log_path=tmp_path_factory.mktemp("strangers") / "streamlit.log") as url:
        pid = server_pid(port_of(url))
        wait_until_warm(pid)
        yield url, pid


def test_a_stranger_s_switch_requests_are_refused_before_any_work_and_leave_nothing(fresh_server):
    url, pid = fresh_server
    before, _ = memory_mb(pid)
    for n in range(STRANGER_REQUESTS):
        texts = {"text": f"a text the server has never seen {secrets.token_hex(8)} " * 20, "second": DEFAULT_SECOND}
        asks = [{"model": BUNDLED_MODEL, **texts, "off": "1:3"},  # the route's old form: free text in the query
                {"ask": secrets.token_urlsafe(16), "off": "0:0"},  # an id of the right form no page was given
                {"ask": "../" * n, "off": ""}]
        for query in asks:
            status, body = get_json(f"{url}/api/switch?{urlencode(query)}")
            assert status == 404 and "no page of this server asked for that" in body["error"], (query, body)
    after, _ = memory_mb(pid)
    assert after - before < LASTING_MB, f"{STRANGER_REQUESTS * 3} refusals grew the server by {after - before:.0f} MB"


def test_a_stranger_s_class_polls_for_codes_that_do_not_exist_say_so(fresh_server):
    url, _ = fresh_server
    alphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
    for _ in range(50):
        code = "".join(secrets.choice(alphabet) for _ in range(6))
        status, body = get_json(f"{url}/api/class?{urlencode({'code': code, 'beat': secrets.token_hex(8)})}")
        assert status == 200 and body == {"reachable": True, "version": None}
    status, _ = get_json(f"{url}/api/class?code=<script>")
    assert status == 400
