"""The server's resident memory: with a model loaded and one session open, then per additional session.

Reads VmRSS of the `streamlit run` process from /proc (Linux only). Each session is a page in its
own browser context, with a 512-token text of its own (as a class would paste: the same long text after
a few words of each student's), opened one after the other and kept open; the memory is read once each
has drawn its heatmap and settled.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from bench.page_speed import CHART_DRAWN, TEXT_512, open_page
from harness.server import port_of, server_pid

SETTLE_S = 1.0  # after a page has settled, for whatever the server frees or allocates late


def rss_mb(pid: int) -> float:
    """Resident memory of a process now, in MB (2**20 bytes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise LookupError(f"no VmRSS for process {pid}")


@dataclass(frozen=True)
class Memory:
    idle_mb: float  # the server up, no session yet (no model loaded)
    with_sessions_mb: tuple[float, ...]  # after 1, 2, … sessions

    @property
    def one_session_mb(self) -> float:
        return self.with_sessions_mb[0]

    @property
    def per_session_mb(self) -> float:
        """The mean growth per session after the first."""
        sessions = self.with_sessions_mb
        return (sessions[-1] - sessions[0]) / (len(sessions) - 1)


def measure(browser, base_url: str, model: str, sessions: int = 10) -> Memory:
    """Open `sessions` sessions on the page with `model`, one after the other; the server's RSS after each."""
    pid = server_pid(port_of(base_url))
    idle = rss_mb(pid)
    pages, after = [], []
    try:
        for index in range(sessions):
            text = f"student {index} reads how every word of this text attends to the others. {TEXT_512}"
            pages.append(open_page(browser, f"{base_url}/?{urlencode({'model': model, 'text': text})}", CHART_DRAWN))
            time.sleep(SETTLE_S)
            after.append(rss_mb(pid))
    finally:
        for page in pages:
            page.context.close()
    return Memory(idle, tuple(after))
