"""A class's worth of browsers against two replicas behind nginx: latency, CPU and memory per replica.

Starts two replicas of the app and nginx in front of them (deploy/nginx.conf, as the deploy test
runs it), opens one browser per simulated student (each its own Chromium, in its own thread, each
with a text of its own so that the caches do not answer for the others), and has every student
move the head once every PERIOD_S seconds for DURATION_S seconds, on the one-head view's heatmap (its own
head input: the browser repaints, then the chart's selection reruns the page). Prints, asserts nothing:

- key press -> settled (harness/browser.py: no script running, no DOM change for 300 ms; the quiet
  window not counted), p50/p95/max over all moves;
- each replica's sessions, CPU seconds used during the run, CPU per move, and resident memory
  (at start, with one session open, after the run, and the peak);
- the sessions one replica could carry at that pace, from its CPU per move.

    python -m bench.load_proxy [students] [duration_s]      (defaults: 10 students, 30 s)

The browsers run on the same 2 cores as the servers, so the latencies are an upper bound; the CPU
per move is the servers' own.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import threading
import time
import urllib.parse
from contextlib import ExitStack, suppress
from pathlib import Path
from tempfile import TemporaryDirectory

from harness.browser import launch_chromium, open_session, press_chart_key
from harness.nginx import REPLICA_ENV, nginx_proxy
from harness.server import APP, cpu_seconds, memory_mb, metrics, port_of, server_pid, streamlit_server

PERIOD_S = 2.0
# Pages open one at a time: ten first loads at once would time out on 2 cores, and are not what is measured.
_OPENING = threading.Lock()


def student(index: int, url: str, replicas: list[str], start: threading.Barrier, duration_s: float,
            timings: dict[int, list[float]], errors: list[str]) -> None:
    """One browser: open the page with a text of its own, then move the heatmap's head input every PERIOD_S.

    Its timings go to timings[replica], the index of the replica that took its session.
    """
    from playwright.sync_api import sync_playwright

    text = f"student {index} reads how every word of this sentence attends to the others"
    try:
        with sync_playwright() as playwright:
            with _OPENING:
                browser = launch_chromium(playwright)
                before = [metrics(replica)["active"] for replica in replicas]
                page = open_session(browser, f"{url}/?{urllib.parse.urlencode({'text': text})}")
                gained = [metrics(replica)["active"] - old for replica, old in zip(replicas, before, strict=True)]
                mine = timings[gained.index(1)]
            start.wait()
            time.sleep(random.uniform(0, PERIOD_S))  # students do not move in step
            deadline = time.monotonic() + duration_s
            next_move, head = time.monotonic(), 0
            while next_move < deadline:
                time.sleep(max(0.0, next_move - time.monotonic()))
                key = "ArrowRight" if head < 11 else "ArrowLeft"
                mine.append(press_chart_key(page, "head", key))
                head = head + 1 if key == "ArrowRight" else head - 1
                next_move += PERIOD_S
            browser.close()
    except Exception as error:  # noqa: BLE001 (reported with the figures)
        errors.append(f"student {index}: {error}")
        start.abort()


def main() -> None:
    students = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    duration_s = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
    with ExitStack() as stack:
        folder = Path(stack.enter_context(TemporaryDirectory(prefix="aa-load-")))
        replicas = [stack.enter_context(streamlit_server(APP, env=REPLICA_ENV, log_path=folder / f"replica{i}.log"))
                    for i in range(2)]
        pids = [server_pid(port_of(url)) for url in replicas]
        proxy = stack.enter_context(nginx_proxy(tuple(port_of(url) for url in replicas), folder / "nginx"))
        memory_at_start = [memory_mb(pid)[0] for pid in pids]

        # One session first (model loaded, one page drawn): the memory of a replica that serves one student.
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            page = open_session(browser, proxy.url)
            holder = max(range(2), key=lambda i: metrics(replicas[i])["active"])
            memory_one = memory_mb(pids[holder])[0]
            page.context.close()
            browser.close()

        timings: dict[int, list[float]] = {index: [] for index in range(len(replicas))}
        errors: list[str] = []
        start = threading.Barrier(students + 1)
        threads = [threading.Thread(target=student, args=(i, proxy.url, replicas, start, duration_s, timings, errors))
                   for i in range(students)]
        for thread in threads:
            thread.start()
        with suppress(threading.BrokenBarrierError):
            start.wait()
        sessions = [int(metrics(url)["active"]) for url in replicas]
        load_at_start = os.getloadavg()[0]
        cpu_before = [cpu_seconds(pid) for pid in pids]
        began = time.monotonic()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - began
        cpu_used = [cpu_seconds(pid) - before for pid, before in zip(pids, cpu_before, strict=True)]
        memory_after = [memory_mb(pid) for pid in pids]

    for error in errors:
        print(error, file=sys.stderr)
    every = [ms for replica_timings in timings.values() for ms in replica_timings]
    if len(every) < 2:
        sys.exit("fewer than two moves were timed")
    cuts = statistics.quantiles(every, n=20, method="inclusive")  # within the data: p95 ≤ max
    print(f"\n{students} students through nginx, one head move each every {PERIOD_S:.0f} s for "
          f"{duration_s:.0f} s ({len(every)} moves in {elapsed:.0f} s; load average {load_at_start:.1f} "
          f"at the start, {os.cpu_count()} cores)")
    print(f"key press -> settled: p50 {statistics.median(every):.0f} ms, p95 {cuts[18]:.0f} ms, "
          f"max {max(every):.0f} ms")
    moves_per_s = 1 / PERIOD_S
    for index in range(len(pids)):
        rss, peak = memory_after[index]
        moves = len(timings[index])
        per_move = cpu_used[index] / moves if moves else float("nan")
        print(f"replica {index}: {sessions[index]} sessions, {moves} moves, {cpu_used[index]:.1f} CPU s "
              f"({cpu_used[index] / elapsed:.2f} cores), {per_move * 1000:.0f} ms CPU per move; "
              f"memory {memory_at_start[index]:.0f} MB at start, "
              + (f"{memory_one:.0f} MB with one session, " if index == holder else "")
              + f"{rss:.0f} MB after, peak {peak:.0f} MB")
        if moves:
            print(f"  at one move per {PERIOD_S:.0f} s per student, one core of this replica carries about "
                  f"{1 / (per_move * moves_per_s):.0f} students moving at once")


if __name__ == "__main__":
    main()
