"""The induction lab's training time and what it ends with: the page's defaults, one torch thread, as the server runs.

    python -m bench.induction [--runs 3] [--seeds 0] [--steps N] [--page]

For each seed, `runs` trainings of both models (the median and the slowest are the figures: a shared machine's
load comes and goes), then each model's loss on the repeated part, its best induction and previous-token heads and
the step its first induction head formed. Target: both models within 60 s, a two-layer head at 0.5 or
more as an induction head and a lower loss than the one-layer model's, no one-layer head above 0.3.

--page times the same training through the page itself, once per run: the Train button on a fresh
`?view=induction` in Chromium, its live curves redrawn every second, on a server started for it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import replace
from pathlib import Path

import torch

from attention.labs.induction import InductionConfig, InductionRun, train

TARGET_S = 60.0
APP = str(Path(__file__).resolve().parents[1] / "page.py")


def describe(run: InductionRun) -> str:
    one, two = run.models
    first = next((event for event in run.events() if event.layers == 2 and event.kind == "induction"), None)
    formed = f"its first induction head at step {first.step} ({first})" if first else "no induction head"
    return (f"1 layer: loss on the repeated part {one.repeated_loss[-1]:.3f}, best induction head "
            f"{one.induction[-1].max():.2f}, best previous-token head {one.previous_token[-1].max():.2f} | "
            f"2 layers: loss {two.repeated_loss[-1]:.3f}, best induction head {two.induction[-1, 1].max():.2f} "
            f"(layer 1), best previous-token head {two.previous_token[-1, 0].max():.2f} (layer 0); {formed}")


def met(run: InductionRun, seconds: float) -> bool:
    one, two = run.models
    return (seconds <= TARGET_S and two.induction[-1].max() >= 0.5 and one.induction[-1].max() <= 0.3
            and two.repeated_loss[-1] < one.repeated_loss[-1])


def page_seconds(config: InductionConfig) -> tuple[float, str]:
    """Train on a fresh page in Chromium, on a server of its own (a finished run is shared by its settings, so a
    second press on the same server would train nothing): the click to the finished run's line, and that line."""
    from playwright.sync_api import sync_playwright

    from harness.browser import launch_chromium, open_tab, wait_until_settled
    from harness.server import streamlit_server

    query = f"?view=induction&steps={config.steps}&seed={config.seed}"
    with streamlit_server(APP) as base_url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = open_tab(browser)
        page.goto(base_url + "/" + query)
        page.locator(".st-key-induction_train button:visible").first.wait_for()
        wait_until_settled(page)
        started = time.perf_counter()
        page.locator(".st-key-induction_train button:visible").first.click()
        done = page.get_by_text(f"Trained {config.steps} steps in").first
        done.wait_for(timeout=600_000)
        seconds = time.perf_counter() - started
        line = done.inner_text()
        browser.close()
    return seconds, line


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.induction", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="trainings per seed (the median is the figure)")
    parser.add_argument("--seeds", default="0", help="seeds, separated by commas")
    parser.add_argument("--steps", type=int, default=None, help="steps, if not the page's default")
    parser.add_argument("--page", action="store_true", help="also time one training through the page (AppTest)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # the server's training turns run on one thread (components/server/process.py)
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} cores, torch {torch.__version__} on 1 thread, load average {load:.1f} at the start")
    for seed in (int(s) for s in args.seeds.split(",")):
        config = replace(InductionConfig(), seed=seed, **({"steps": args.steps} if args.steps else {}))
        times, pages = [], []
        for _ in range(args.runs):  # the page's runs between the core's, so that the machine's load weighs on both
            started = time.perf_counter()
            run = train(config)
            times.append(time.perf_counter() - started)
            if args.page:
                seconds, line = page_seconds(config)
                pages.append(seconds)
                print(f"  through the page: {seconds:.1f} s from the click; the page says: {line}", flush=True)
        median = statistics.median(times)
        print(f"seed {seed}, {config.steps} steps: median {median:.1f} s, slowest {max(times):.1f} s "
              f"({', '.join(f'{t:.1f}' for t in times)}); {'met' if met(run, median) else 'NOT MET'}")
        print(f"  {describe(run)}")
        if pages:
            print(f"  through the page in Chromium: median {statistics.median(pages):.1f} s, slowest "
                  f"{max(pages):.1f} s, against {TARGET_S:.0f} s")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
