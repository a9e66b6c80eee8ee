"""The induction lab's training time and what it ends with: the page's defaults, one torch thread, as the server runs.

    python -m bench.induction [--runs 3] [--seeds 0] [--steps N] [--page]

For each seed, `runs` trainings of both models (the median and the slowest are the figures: a shared machine's
load comes and goes), then each model's loss on the repeated part, its best induction and previous-token heads and
the step its first induction head formed. Target (issue 33): both models within 60 s, a two-layer head at 0.5 or
more as an induction head and a lower loss than the one-layer model's, no one-layer head above 0.3.

--page times the same training through the page itself (Streamlit's AppTest: the Train button on a fresh
`?view=induction`, its live charts redrawn as a browser's session would have them), once.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import replace
from pathlib import Path

import torch

from attention.induction import InductionConfig, InductionRun, train

TARGET_S = 60.0
APP = str(Path(__file__).resolve().parents[1] / "streamlit_app.py")


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


def page_seconds(config: InductionConfig) -> float:
    """Train on a fresh page, through AppTest: the click to the finished run's page."""
    from streamlit.testing.v1 import AppTest

    page = AppTest.from_file(APP, default_timeout=600)
    page.query_params["view"] = "induction"
    page.query_params["steps"] = str(config.steps)
    page.query_params["seed"] = str(config.seed)
    page.run()
    started = time.perf_counter()
    page.button(key="induction_train").click().run()
    seconds = time.perf_counter() - started
    if page.exception:
        raise RuntimeError([e.message for e in page.exception])
    return seconds


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
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            run = train(config)
            times.append(time.perf_counter() - started)
        median = statistics.median(times)
        print(f"seed {seed}, {config.steps} steps: median {median:.1f} s, slowest {max(times):.1f} s "
              f"({', '.join(f'{t:.1f}' for t in times)}); {'met' if met(run, median) else 'NOT MET'}")
        print(f"  {describe(run)}")
        if args.page:
            print(f"  through the page: {page_seconds(config):.1f} s from the click to the finished run")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
