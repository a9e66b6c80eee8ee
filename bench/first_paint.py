"""Launch to first paint, each time in a new process: the app against a bare page, and its first heatmap against
a bare import of what it is built on.

    (a) a bare Streamlit page (bench/bare_app.py): launch -> its title visible in Chromium
    (b) the app: launch -> its first element visible (the sidebar's title, or the page's on a projected page)
    (c) `python -c "import torch, transformers, streamlit, altair"`: wall time of the new process
    (d) the app: launch -> its first heatmap drawn (the same launch as (b), the page left to load)

A launch is `streamlit run` started (harness/server.py), its health check answered, the default link
opened in a fresh browser context: the server's start is counted in every figure, as a reader waits for it too.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.page_speed import APP, CHART_DRAWN, ROOT, TIMEOUT_MS
from bench.report import Row, verdict
from harness.browser import new_page
from harness.server import streamlit_server

BARE_APP = Path(__file__).resolve().parent / "bare_app.py"
TITLE_SHOWN = '[data-testid="stSidebar"] h1, [data-testid="stMain"] h1'  # either title: whichever comes first
BARE_IMPORTS = "import torch, transformers, streamlit, altair"
FIRST_ELEMENT_TARGET = 1.5  # × the bare page's first paint
FIRST_HEATMAP_TARGET = 1.5  # × the bare imports


@dataclass
class FirstPaint:
    """Seconds, one figure per run."""

    bare_page_s: list[float] = field(default_factory=list)
    first_element_s: list[float] = field(default_factory=list)
    bare_imports_s: list[float] = field(default_factory=list)
    first_heatmap_s: list[float] = field(default_factory=list)


def measure(browser, runs: int, work: Path, progress) -> FirstPaint:
    """runs rounds of (a) to (d), each figure from a new process; rounds rather than blocks, so that a load on
    the machine that comes and goes weighs on all four alike."""
    figures = FirstPaint()
    for run in range(1, runs + 1):
        (bare,) = _launch(browser, BARE_APP, (TITLE_SHOWN,), work / f"bare-{run}.log")
        element, heatmap = _launch(browser, APP, (TITLE_SHOWN, CHART_DRAWN), work / f"first-paint-{run}.log")
        imports = _bare_imports()
        figures.bare_page_s.append(bare)
        figures.first_element_s.append(element)
        figures.bare_imports_s.append(imports)
        figures.first_heatmap_s.append(heatmap)
        progress(f"  run {run}: bare page {bare:.1f} s, app's first element {element:.1f} s, bare imports "
                 f"{imports:.1f} s, app's first heatmap {heatmap:.1f} s")
    return figures


def _launch(browser, script: Path, shown: tuple[str, ...], log_path: Path) -> list[float]:
    """Start a server for script and open it: the seconds from the launch until each selector of shown is visible,
    in turn."""
    launched = time.monotonic()
    with streamlit_server(script, log_path=log_path, cwd=ROOT) as url:  # both under the app's config.toml
        page = new_page(browser, viewport={"width": 1280, "height": 720})
        try:
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)
            seconds = []
            for selector in shown:
                page.locator(selector).first.wait_for()
                seconds.append(time.monotonic() - launched)
            return seconds
        finally:
            page.context.close()


def _bare_imports() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", BARE_IMPORTS], check=True)
    return time.monotonic() - started


def rows(figures: FirstPaint) -> list[Row]:
    """The four medians, and the two ratios against their targets."""
    median = {name: statistics.median(values) for name, values in vars(figures).items()}
    count = len(figures.bare_page_s)

    def seconds(name: str) -> tuple[str, str]:
        return f"{median[name]:.1f} s", f"{max(getattr(figures, name)):.1f} s"

    element_ratio = median["first_element_s"] / median["bare_page_s"]
    heatmap_ratio = median["first_heatmap_s"] / median["bare_imports_s"]
    return [
        Row("first paint, bare page", "new process: launch → a one-title page's title visible", count,
            *seconds("bare_page_s"), "1.0×", "", None),
        Row("first paint, app", "new process: launch → the sidebar's title visible", count,
            *seconds("first_element_s"), f"{element_ratio:.1f}×", f"≤ {FIRST_ELEMENT_TARGET}× the bare page",
            verdict(element_ratio, FIRST_ELEMENT_TARGET)),
        Row("bare imports", f"new process: `python -c \"{BARE_IMPORTS}\"`", count, *seconds("bare_imports_s"),
            "1.0×", "", None),
        Row("first heatmap, app", "new process: launch → first heatmap drawn (the same launch)", count,
            *seconds("first_heatmap_s"), f"{heatmap_ratio:.1f}×", f"≤ {FIRST_HEATMAP_TARGET}× the bare imports",
            verdict(heatmap_ratio, FIRST_HEATMAP_TARGET)),
    ]
