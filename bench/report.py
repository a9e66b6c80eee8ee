"""The benchmark's figures as one Markdown table: each against its target, met or not."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path


@dataclass(frozen=True)
class Row:
    case: str
    moved: str  # what the case moves, or what it measures
    count: int | None  # moves or samples behind the median
    median: str
    maximum: str
    ratio: str  # the median against the case's reference, "" when there is none
    target: str
    met: bool | None  # None: reported only, no target
    server: str = ""  # page cases: when the server's last message arrived (the rest is the browser drawing)
    floor: str = ""  # page cases: the floor's median, measured between the case's moves


def ms(value: float) -> str:
    return f"{value:.0f} ms"


def verdict(value: float, limit: float | None) -> bool | None:
    return None if limit is None else value <= limit


def table(rows: list[Row]) -> str:
    header = ["case", "what moves / what is measured", "n", "median", "max", "server", "floor", "ratio", "target",
              "met"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * 3 + "---:|" * 5 + "---|---|"]
    for row in rows:
        met = {True: "met", False: "**not met**", None: ""}[row.met]
        cells = [row.case, row.moved, "" if row.count is None else str(row.count), row.median, row.maximum,
                 row.server, row.floor, row.ratio, row.target, met]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine(load_at_start: tuple[float, float, float], browser_version: str | None, seconds: float) -> str:
    """One paragraph: the machine, its load during the run, and the versions measured."""
    memory_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                     if line.startswith("MemTotal:"))
    load_now = os.getloadavg()
    versions = ", ".join(f"{name} {version(name)}" for name in ("streamlit", "torch", "transformers"))
    chromium = f", Chromium {browser_version}" if browser_version else ""
    return (f"Machine: {os.cpu_count()} cores, {memory_kb / 2**20:.0f} GB, {platform.machine()}; load average "
            f"{load_at_start[0]:.1f} at the start, {load_now[0]:.1f} at the end (1-minute); "
            f"Python {platform.python_version()}, {versions}{chromium}; {seconds / 60:.1f} minutes in all.")
