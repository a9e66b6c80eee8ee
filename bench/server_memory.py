"""The server's resident memory: with a model loaded and one session open, then per additional session; and with
the bundled model and the offline decoder loaded side by side, a page open on each.

Reads VmRSS of the `streamlit run` process from /proc (Linux only). Each session is a page in its
own browser context, with a 512-token text of its own (as a class would paste: the same long text after
a few words of each student's), opened one after the other and kept open; the memory is read once each
has drawn its heatmap and settled. The decoder's page loads it (its GGUF dequantized to float32), and the
kernel's peak of the server's resident memory (VmHWM), reset just before, says what the load held on its way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from bench import offline_decoder
from bench.page_speed import CHART_DRAWN, TEXT_32, TEXT_512, TIMEOUT_MS, open_page
from harness.browser import new_page
from harness.server import memory_mb, port_of, reset_peak, server_pid

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


@dataclass(frozen=True)
class BesideBundled:
    """The server with a page on the bundled model, then one on the offline decoder beside it."""

    idle_mb: float  # the server up, no session yet
    bundled_mb: float  # VmRSS once the bundled model's page drew
    both_mb: float  # VmRSS once the decoder's page drew too, both pages open
    peak_mb: float  # VmHWM: the peak from the decoder's link to its page drawn (since the server began, if not reset)
    peak_of_load: bool  # whether the peak was reset before the decoder's link (Linux may refuse)
    load_s: float  # the decoder's link -> its heading, the page's bar followed


def measure_beside_bundled(browser, base_url: str, told) -> BesideBundled:
    """Open a page on the bundled model, then one on the offline decoder, which loads it (told hears its stages);
    the server's RSS after each, and its peak during the load."""
    pid = server_pid(port_of(base_url))
    idle = rss_mb(pid)
    bundled_page = open_page(browser, f"{base_url}/?{urlencode({'text': TEXT_32})}", CHART_DRAWN)
    decoder_page = None
    try:
        time.sleep(SETTLE_S)
        bundled = rss_mb(pid)
        reset = reset_peak(pid)
        decoder_page = new_page(browser, viewport={"width": 1400, "height": 1000})
        decoder_page.set_default_timeout(TIMEOUT_MS)
        load_s = offline_decoder.load_through_page(decoder_page, base_url, told)
        time.sleep(SETTLE_S)
        both, peak = memory_mb(pid)
    finally:
        for page in (bundled_page, decoder_page):
            if page is not None:
                page.context.close()
    return BesideBundled(idle, bundled, both, peak, reset, load_s)
