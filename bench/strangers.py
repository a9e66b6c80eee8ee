"""What a stranger's plain GETs cost a fresh server with no page open: the App's routes against its health check.

A server is started (the App, the bundled model, no page), left until its start's own import of torch is done, then
asked, in this order and COUNT times each, one request at a time:
  health     /_stcore/health, Streamlit's own: the reference, measured in the same run
  old form   /api/switch with a text the server has never seen in its query, as the route once took it
  random ask /api/switch with an id of the right form that no page was given
  class      /api/class for a random class code, with a random follower's beat
Printed for each: the server's CPU per request (its user + system time over the batch, from /proc), the ratio to
the health check's, the wall time per request, and what the server's resident memory grew by over the batch.

    python -m bench.strangers [--count N] [--app PATH]

--app runs another checkout's streamlit_app.py (a worktree of an older commit) to compare. Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import secrets
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

from attention.models.model_list import BUNDLED_MODEL  # a name, no torch
from harness.server import (
    APP,
    cpu_seconds,
    get_json,
    memory_mb,
    port_of,
    server_pid,
    streamlit_server,
    wait_until_warm,
)

CODE_LETTERS = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def _health(url: str) -> str:
    return f"{url}/_stcore/health"


def _old_form(url: str) -> str:
    text = f"a text this server has never seen {secrets.token_hex(8)} " * 20
    return f"{url}/api/switch?{urlencode({'model': BUNDLED_MODEL, 'text': text, 'second': 'b', 'off': '1:3'})}"


def _random_ask(url: str) -> str:
    return f"{url}/api/switch?{urlencode({'ask': secrets.token_urlsafe(16), 'off': '0:0'})}"


def _class(url: str) -> str:
    code = "".join(secrets.choice(CODE_LETTERS) for _ in range(6))
    return f"{url}/api/class?{urlencode({'code': code, 'beat': secrets.token_hex(8)})}"


CASES = {"health": _health, "old form": _old_form, "random ask": _random_ask, "class": _class}


def _ask(url: str) -> int:
    if url.endswith("/_stcore/health"):
        import urllib.request

        with urllib.request.urlopen(url, timeout=600) as answer:
            return answer.status
    return get_json(url)[0]


def measure(app: Path, count: int) -> list[tuple[str, int, float, float, float, list[int]]]:
    """(case, requests, server CPU ms a request, wall ms a request, MB grown, statuses seen) for each case."""
    rows = []
    with tempfile.TemporaryDirectory() as folder, streamlit_server(app, log_path=Path(folder) / "log") as url:
        pid = server_pid(port_of(url))
        wait_until_warm(pid)
        for case, make_url in CASES.items():
            urls = [make_url(url) for _ in range(count)]
            cpu_before, (rss_before, _), started = cpu_seconds(pid), memory_mb(pid), time.perf_counter()
            statuses = sorted({_ask(one) for one in urls})
            wall, cpu = time.perf_counter() - started, cpu_seconds(pid) - cpu_before
            rows.append((case, count, 1000 * cpu / count, 1000 * wall / count, memory_mb(pid)[0] - rss_before,
                         statuses))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.strangers", description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="requests of each case (default 200)")
    parser.add_argument("--app", type=Path, default=Path(APP), help="the streamlit_app.py to serve")
    arguments = parser.parse_args()
    rows = measure(arguments.app.resolve(), arguments.count)
    reference = rows[0][2]
    print(f"Server: {arguments.app.resolve()}; {arguments.count} requests a case, one at a time.\n")
    print("| case | n | server CPU a request | × health | wall a request | memory grown | statuses |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for case, count, cpu_ms, wall_ms, grown_mb, statuses in rows:
        ratio = cpu_ms / reference if reference else float("nan")
        print(f"| {case} | {count} | {cpu_ms:.2f} ms | {ratio:.1f} | {wall_ms:.1f} ms | {grown_mb:+.1f} MB | "
              f"{', '.join(map(str, statuses))} |")


if __name__ == "__main__":
    main()
