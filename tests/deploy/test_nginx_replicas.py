"""Two replicas of the app behind nginx (deploy/nginx.conf, as committed), driven by real browsers.

Starts two `streamlit run` processes and nginx in front of them on loopback (once for the module),
then opens sessions through the proxy, each in its own browser context (so its own cookies):

- sessions are spread over both replicas, and every request of one browser (the page, its static
  files, /_stcore/health, its websocket, the /media/ file of a download) reaches the same replica;
- a session keeps its state across reruns (the heatmap's head input moves; the URL, the heading and the
  heatmap follow);
- the proxy passes Host through, so Streamlit's websocket Origin check (server.enableCORS, on) accepts
  the app's own origin under any host name and still refuses a foreign one;
- a link holding the longest texts the page takes opens the page with them;
- after one replica is killed, its browsers reconnect to the other, and new browsers still open
  the page there.

Which replica holds a session is read from two places that do not depend on each other: each
replica's own /_stcore/metrics (active_sessions goes up by one on the replica that got the
websocket), and nginx's access log (deploy/nginx.conf logs every request's route cookie and the
replica that answered it).
"""

from __future__ import annotations

import base64
import http.client
import os
import re
import signal
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest

from components.page.page_state import MAX_TEXT_CHARS
from harness.browser import (
    chart_input,
    chart_pixels,
    launch_chromium,
    open_session,
    open_tab,
    press_chart_key,
    wait_until_settled,
    weights_chart,
)
from harness.nginx import REPLICA_ENV, Proxy, nginx_proxy, open_on_replica
from harness.server import APP, metrics, port_of, server_pid, streamlit_server, wait_for
from tests.marks import NEEDS_CHROMIUM, NEEDS_NGINX

CSV_HEADER = "query_index,query_token,key_index,key_token,score,masked_score,weight,alpha_fx_norm"
# Both texts of a link as long as the page takes them, in letters that URL-encode to six and nine
# characters each: a request line of about 105,000 characters (nginx's default buffers hold 8 kB).
LONG_TEXT = ("Zeit fließt wie ein Pfeil — Früchte fliegen wie eine Banane. " * 200)[:MAX_TEXT_CHARS]
LONG_TEXT_B = ("時は矢のように飛ぶ。" * 1000)[:MAX_TEXT_CHARS]

pytestmark = [pytest.mark.deploy, pytest.mark.long, *NEEDS_NGINX, *NEEDS_CHROMIUM]


def access_log(path: Path) -> dict[str, list[tuple[str, str, str]]]:
    """nginx's access log (format `replicas` in deploy/nginx.conf) as {route: [(uri, upstream, status)]}."""
    requests = defaultdict(list)
    line_format = re.compile(r'route=(\S+) upstream=(\S+(?:, \S+)*) status=(\d+) "\S+ (\S+)"')
    for line in path.read_text().splitlines():
        found = line_format.search(line)
        assert found, f"unexpected access log line: {line}"
        route, upstream, status, uri = found.groups()
        requests[route].append((uri, upstream, status))
    return requests


def expect_view(page, layer: int, head: int) -> None:
    """The page names the layer and head it shows ("Layer 1, head 2", in a heading or a chart title)."""
    from playwright.sync_api import expect

    expect(page.get_by_text(re.compile(rf"\blayer {layer}, head {head}(?!\d)", re.IGNORECASE)).first).to_be_visible()


def route_of(page) -> str:
    cookies = {cookie["name"]: cookie["value"] for cookie in page.context.cookies()}
    assert "_streamlit_xsrf" in cookies, "Streamlit's XSRF cookie did not come through the proxy"
    return cookies["aa_route"]


def websocket_handshake(proxy_url: str, host: str, origin: str) -> int:
    """Open /_stcore/stream through the proxy with the given Host and Origin; return the HTTP status."""
    connection = http.client.HTTPConnection(proxy_url.removeprefix("http://"), timeout=20)
    try:
        connection.request("GET", "/_stcore/stream", headers={
            "Host": host, "Origin": origin, "Upgrade": "websocket", "Connection": "Upgrade",
            "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(), "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Protocol": "streamlit"})
        return connection.getresponse().status
    finally:
        connection.close()


def open_until_spread(browser, proxy: Proxy, replicas: list[str], query: str = "", at_least: int = 3,
                      at_most: int = 12):
    """Open sessions one at a time until every replica holds some; return [(page, replica index)].

    The route cookie is random, so where a browser lands is chance: 12 sessions all on one of two
    replicas would happen about once in 2,000 runs of a fair hash. The replica whose active_sessions
    went up is the one that got the session's websocket.
    """
    sessions = []
    while len(sessions) < at_least or len({replica for _, replica in sessions}) < len(replicas):
        assert len(sessions) < at_most, f"{at_most} sessions, all on replica {sessions[0][1]}: nothing spreads them"
        sessions.append(open_on_replica(browser, f"{proxy.url}/{query}", replicas))
    return sessions


def move_head(page, head: int) -> None:
    """Press ArrowRight on the heatmap's head input until it reads head; the URL and the heatmap must follow."""
    from playwright.sync_api import expect

    before = chart_pixels(page)
    for _ in range(head - int(chart_input(page, "head").input_value())):
        press_chart_key(page, "head", "ArrowRight")
    expect(chart_input(page, "head")).to_have_value(str(head))
    expect(page).to_have_url(re.compile(rf"[?&]head={head}(&|$)"))
    expect_view(page, 0, head)
    wait_for(lambda: chart_pixels(page) != before, "the heatmap to be redrawn for the new head")


@dataclass(frozen=True)
class Cluster:
    replicas: list[str]  # base URLs, asked directly for their metrics
    upstreams: list[str]  # the same replicas as nginx names them in its log
    proxy: Proxy
    browser: object
    logs: Path  # the replicas' output: replica0.log, replica1.log


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=30_000)  # two servers, nginx and a browser share 2 cores
    logs = tmp_path_factory.mktemp("replicas")
    with ExitStack() as stack:
        replicas = [stack.enter_context(streamlit_server(APP, env=REPLICA_ENV, log_path=logs / f"replica{i}.log"))
                    for i in range(2)]
        ports = tuple(port_of(url) for url in replicas)
        proxy = stack.enter_context(nginx_proxy(ports, logs / "nginx"))
        browser = launch_chromium(stack.enter_context(sync_playwright()), optimised_js=False)
        stack.callback(browser.close)
        yield Cluster(replicas, [f"127.0.0.1:{port}" for port in ports], proxy, browser, logs)


def answered_by(cluster: Cluster, page) -> set[str]:
    """Which replicas answered this browser's requests, as nginx logged them ("a, b": a refused, then b)."""
    return {upstream for _, upstream, _ in access_log(cluster.proxy.access_log)[route_of(page)]}


def test_sessions_spread_and_stick(cluster):
    from playwright.sync_api import expect

    replicas, upstreams = cluster.replicas, cluster.upstreams
    sessions = open_until_spread(cluster.browser, cluster.proxy, replicas)

    # Every request of each browser so far went to the replica that holds its websocket.
    log = access_log(cluster.proxy.access_log)
    for page, replica in sessions:
        requests = log[route_of(page)]
        assert {upstream for _, upstream, _ in requests} == {upstreams[replica]}, requests
        uris = {uri for uri, _, _ in requests}
        assert "/" in uris and "/_stcore/health" in uris and any(u.startswith("/static/") for u in uris), uris

    # A session keeps its state across reruns, on each replica, without a new session. Different
    # heads make different CSVs, so each replica holds a /media/ file the other one never made.
    moved = {}  # replica index -> its page whose head was moved to replica index + 1
    for page, replica in sessions:
        if replica not in moved:
            before = [metrics(url) for url in replicas]
            move_head(page, replica + 1)
            assert [metrics(url) for url in replicas] == before, "a rerun must not open a new session"
            moved[replica] = page
    for replica, page in moved.items():
        with page.expect_download() as download_info:
            page.locator(".st-key-csv button").click()
        rows = Path(download_info.value.path()).read_text(encoding="utf-8").splitlines()
        assert rows[0] == CSV_HEADER
        media = [entry for entry in access_log(cluster.proxy.access_log)[route_of(page)]
                 if entry[0].startswith("/media/")]
        assert media and {upstream for _, upstream, _ in media} == {upstreams[replica]}, media
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)

    # Host passes through: the app's own origin is accepted under a host name Streamlit does not
    # know (so as same-origin, not as "localhost"), and a foreign origin is still refused.
    host = f"attention-anatomy.test:{port_of(cluster.proxy.url)}"
    assert websocket_handshake(cluster.proxy.url, host, f"http://{host}") == 101
    assert websocket_handshake(cluster.proxy.url, host, "http://elsewhere.test") == 403
    # The one websocket Streamlit refused was the foreign origin's: every browser's passed its checks.
    refusals = sum((cluster.logs / f"replica{i}.log").read_text().count("Rejecting WebSocket connection")
                   for i in range(len(replicas)))
    assert refusals == 1

    for page, _ in sessions:
        page.context.close()


def test_a_link_with_the_longest_texts_opens_the_page_through_the_proxy(cluster):
    from playwright.sync_api import expect

    query = urlencode({"text": LONG_TEXT, "text_b": LONG_TEXT_B})
    assert len(query) > 100_000
    page = open_tab(cluster.browser)
    response = page.goto(f"{cluster.proxy.url}/?{query}")
    assert response.status == 200, f"the proxy answered the long link with HTTP {response.status}"
    weights_chart(page).locator("canvas, svg.marks").first.wait_for()
    wait_until_settled(page)

    expect(page.locator(".st-key-text textarea")).to_have_value(LONG_TEXT)
    expect(page.locator(".st-key-text_b input")).to_have_value(LONG_TEXT_B)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="tokens were dropped")).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page_loads = [status for uri, _, status in access_log(cluster.proxy.access_log)[route_of(page)] if uri == "/"]
    assert page_loads == ["200"], page_loads
    page.context.close()


def test_failover_to_the_other_replica(cluster):
    from playwright.sync_api import expect

    replicas, upstreams = cluster.replicas, cluster.upstreams
    wait_for(lambda: sum(metrics(url)["active"] for url in replicas) == 0, "earlier sessions to close")
    sessions = open_until_spread(cluster.browser, cluster.proxy, replicas, query="?layer=1&head=2", at_least=2)

    # Kill one replica without a goodbye (SIGKILL, as the kernel's OOM killer would).
    dead, alive = 1, 0
    orphans = [page for page, replica in sessions if replica == dead]
    survivor_sessions = metrics(replicas[alive])["active"]
    os.kill(server_pid(port_of(replicas[dead])), signal.SIGKILL)

    # Its browsers reconnect to the survivor (a new session each: the old ones died with the process).
    wait_for(lambda: metrics(replicas[alive])["active"] == survivor_sessions + len(orphans),
              f"{len(orphans)} browsers of the killed replica to reconnect to the survivor", timeout_s=45)
    for page in orphans:
        expect(page.locator('[data-testid="stApp"]')).to_have_attribute("data-test-connection-state", "CONNECTED")
        expect_view(page, 1, 2)

    # New browsers open the page on the survivor (after one refused try of the dead replica, maybe).
    for _ in range(2):
        page = open_session(cluster.browser, cluster.proxy.url)
        assert answered_by(cluster, page) <= {upstreams[alive], f"{upstreams[dead]}, {upstreams[alive]}"}

    # An orphan's first move runs on the survivor: the page then agrees with itself (input, URL, heading).
    orphan = orphans[0]
    press_chart_key(orphan, "head", "ArrowRight")
    head = chart_input(orphan, "head").input_value()
    expect(orphan).to_have_url(re.compile(r"[?&]layer=1(&|$)"))
    expect(orphan).to_have_url(re.compile(rf"[?&]head={head}(&|$)"))
    expect_view(orphan, 1, int(head))
    assert head == "3", "the first move after the failover was undone"

    # Reloaded, it is drawn afresh by the survivor from its URL.
    orphan.reload()
    weights_chart(orphan).locator("canvas, svg.marks").first.wait_for()
    wait_until_settled(orphan)
    expect(chart_input(orphan, "head")).to_have_value(head)
    expect_view(orphan, 1, int(head))
    last_page_load = [upstream for uri, upstream, _ in access_log(cluster.proxy.access_log)[route_of(orphan)]
                      if uri == "/"][-1]
    assert last_page_load.endswith(upstreams[alive]), last_page_load
