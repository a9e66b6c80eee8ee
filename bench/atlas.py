"""The head atlas over the corpus: how long the first time takes, and the times after, in a cold process each run.

    python -m bench.atlas [--runs 3] [--page]

Each run starts a fresh Python process that, as the server does (one torch thread, components/server/process.py),
loads the bundled model, computes the corpus atlas through the page's cache (components/caches/atlas.py), then
asks the cache again: the model's load, the first time and the cached time are the figures (the median and the
slowest of the runs: a shared machine's load comes and goes). Target: the first time within 30 s, the
cached at once.

--page times the same through the page, once per run, on a server of its own: a fresh `?view=atlas` in Chromium
(its model loaded first, on `?view=head`) from the link to the grid's glyphs drawn, then a second tab's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 30.0
APP = str(Path(__file__).resolve().parents[1] / "page.py")
ROOT = Path(__file__).resolve().parents[1]
GLYPH = '[data-testid="stVegaLiteChart"] path[aria-label^="head: 2; layer: 0;"]'


def one_cold_run() -> dict[str, float]:
    """In this (fresh) process: the model's load, the corpus atlas the first time and again, in seconds."""
    from components.server import process

    process.configure()
    from components.caches import atlas as kept
    from components.caches.models import model

    started = time.perf_counter()
    model("all-MiniLM-L6-v2")
    loaded = time.perf_counter()
    kept.corpus_atlas("all-MiniLM-L6-v2")
    first = time.perf_counter()
    kept.corpus_atlas("all-MiniLM-L6-v2")
    again = time.perf_counter()
    return {"load": loaded - started, "first": first - loaded, "cached": again - first}


def cold_run() -> dict[str, float]:
    output = subprocess.run([sys.executable, "-m", "bench.atlas", "--one"], cwd=ROOT, check=True, text=True,
                            capture_output=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}).stdout
    return json.loads(output.strip().splitlines()[-1])


def page_seconds() -> tuple[float, float]:
    """On a fresh server: a first `?view=atlas` from the link to its grid drawn (the model loaded before), then a
    second tab's."""
    from playwright.sync_api import sync_playwright

    from harness.browser import launch_chromium, load_page, open_tab
    from harness.server import streamlit_server

    with streamlit_server(APP) as base_url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        warm = open_tab(browser)
        load_page(warm, f"{base_url}/?view=head")  # the model loaded: the atlas's own time is what is left
        times = []
        for _ in range(2):
            page = open_tab(browser)
            started = time.perf_counter()
            page.goto(f"{base_url}/?view=atlas")
            page.locator(GLYPH).wait_for(timeout=300_000)
            times.append(time.perf_counter() - started)
            page.context.close()
        browser.close()
    return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.atlas", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold processes (the median is the figure)")
    parser.add_argument("--page", action="store_true", help="also time the view in Chromium, once per run")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # one cold run, as JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_cold_run()))
        return
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    runs, pages = [], []
    for _ in range(args.runs):  # the page's runs between the core's, so that the machine's load weighs on both
        runs.append(cold_run())
        print("  cold process: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in runs[-1].items()),
              flush=True)
        if args.page:
            pages.append(page_seconds())
            print(f"  through the page: first {pages[-1][0]:.1f} s, again {pages[-1][1]:.1f} s", flush=True)
    for name in ("load", "first", "cached"):
        times = [run[name] for run in runs]
        print(f"{name}: median {statistics.median(times):.3f} s, slowest {max(times):.3f} s")
    first = statistics.median(run["first"] for run in runs)
    print(f"first time against {TARGET_S:.0f} s: {'met' if first <= TARGET_S else 'NOT MET'}")
    if pages:
        print(f"through the page in Chromium: first median {statistics.median(p[0] for p in pages):.1f} s, slowest "
              f"{max(p[0] for p in pages):.1f} s; again median {statistics.median(p[1] for p in pages):.1f} s")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
