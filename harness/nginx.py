"""deploy/nginx.conf, as committed, in front of two app replicas on loopback, on free ports.

Used by tests/deploy/test_replicas.py (sessions spread, stick and fail over; a class across both) and
bench/load_proxy.py (a class's worth of browsers through the proxy).
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.browser import open_session
from harness.server import free_port, metrics

NGINX_CONF = Path(__file__).resolve().parents[1] / "deploy" / "nginx.conf"
# The ports written in deploy/nginx.conf: nginx's own, then one per replica.
CONF_LISTEN_PORT = 8600
CONF_REPLICA_PORTS = (8601, 8602)
# The replicas may never reach past loopback. Streamlit asks a public "what is my IP" service when a
# websocket's Origin is neither the page's own nor local (the deploy test sends a foreign one): send
# that to a closed loopback port instead, where it fails at once.
NO_WAY_OUT = "http://127.0.0.1:9"
REPLICA_ENV = {"HTTP_PROXY": NO_WAY_OUT, "HTTPS_PROXY": NO_WAY_OUT, "http_proxy": NO_WAY_OUT,
               "https_proxy": NO_WAY_OUT, "NO_PROXY": "", "no_proxy": ""}


def open_on_replica(browser, url: str, replicas: list[str]):
    """Open url through the proxy in a fresh browser context; return the page and the index of the replica
    whose active sessions went up: the one that got the session's websocket."""
    before = [metrics(replica)["active"] for replica in replicas]
    page = open_session(browser, url)
    gained = [metrics(replica)["active"] - old for replica, old in zip(replicas, before, strict=True)]
    assert sorted(gained) == [0, 1], f"a new session should add one websocket on one replica: {gained}"
    return page, gained.index(1)


def open_until_spread(browser, proxy_url: str, replicas: list[str], query: str = "", at_least: int = 3,
                      at_most: int = 20):
    """Open sessions one at a time until every replica holds some; return [(page, replica index)].

    The route cookie is random, so where a browser lands is chance: 20 sessions all on one of two
    replicas would happen about once in 500,000 runs of a fair hash (12, once in 2,000).
    """
    sessions = []
    while len(sessions) < at_least or len({replica for _, replica in sessions}) < len(replicas):
        assert len(sessions) < at_most, f"{at_most} sessions, all on replica {sessions[0][1]}: nothing spreads them"
        sessions.append(open_on_replica(browser, f"{proxy_url}/{query}", replicas))
    return sessions


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


def route_of(page) -> str:
    """The browser's route cookie, which deploy/nginx.conf hashes to pick its replica."""
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


def nginx_path() -> str | None:
    """Debian's nginx (`apt-get install -y nginx`); /usr/sbin is not on every user's PATH."""
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


def nginx_config(text: str, listen_port: int, replica_ports: tuple[int, int]) -> str:
    """deploy/nginx.conf's text with other ports: listen_port for 8600, replica_ports for 8601 and 8602."""
    replacements = {f"listen 127.0.0.1:{CONF_LISTEN_PORT};": f"listen 127.0.0.1:{listen_port};"}
    for conf_port, port in zip(CONF_REPLICA_PORTS, replica_ports, strict=True):
        replacements[f"server 127.0.0.1:{conf_port} "] = f"server 127.0.0.1:{port} "
    for old, new in replacements.items():
        if text.count(old) != 1:
            raise ValueError(f"deploy/nginx.conf should contain {old!r} exactly once, so that its ports can be set")
        text = text.replace(old, new)
    return text


@dataclass(frozen=True)
class Proxy:
    url: str
    access_log: Path


@contextlib.contextmanager
def nginx_proxy(replica_ports: tuple[int, int], folder: Path) -> Iterator[Proxy]:
    """Run nginx with deploy/nginx.conf in front of the replicas on a free port; stop it afterwards.

    nginx's prefix (-p) is folder: its pid file, temporary files and access log go there.
    """
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = folder / "nginx.conf"
    config.write_text(nginx_config(NGINX_CONF.read_text(), port, replica_ports))
    command = [nginx_path(), "-p", str(folder), "-e", "stderr", "-c", str(config), "-g", "daemon off;"]
    with open(folder / "nginx.out", "w+b") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait_for_port(process, port, output)
            yield Proxy(f"http://127.0.0.1:{port}", folder / "access.log")
        finally:
            # SIGTERM: nginx's fast shutdown, which also closes the websockets it holds.
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)  # the master and its worker
                process.wait(timeout=10)


def _wait_for_port(process: subprocess.Popen, port: int, output, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output.seek(0)
            message = output.read().decode(errors="replace")
            raise RuntimeError(f"nginx exited with code {process.returncode}:\n{message}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nginx did not listen on 127.0.0.1:{port} within {timeout_s:.0f} s")
