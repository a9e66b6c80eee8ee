"""The benchmark's figures as one Markdown table: each against its target, met or not.

A figure is a number with its unit (Figure); the table writes it, so that the same rows read back from a results
file (bench/results_file.py) make the same table. A row built from text ("1.2 s", "≤ 1.5× the bare page") keeps
the number that text shows.
"""

from __future__ import annotations

import os
import platform
import re
import statistics
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

UNITS = ("ms", "s", "MB", "GB", "B", "×")  # B: bytes, written in kB from 1 kB up; ×: a ratio
_WRITTEN = re.compile(r"(?P<number>\d[\d,]*(?:\.(?P<decimals>\d+))?) ?(?P<unit>ms|s|MB|GB|kB|B|×)(?: (?P<note>.+))?")


@dataclass(frozen=True)
class Figure:
    """A measured number, its unit, and how the table writes it."""

    value: float
    unit: str  # one of UNITS
    digits: int = 0  # decimals written
    note: str = ""  # words after the number: "(mean)", or a target's reference, "the bare page"

    def __str__(self) -> str:
        if self.unit == "B":
            number = f"{self.value / 1024:,.0f} kB" if self.value >= 1024 else f"{self.value:.0f} B"
        else:
            number = f"{self.value:.{self.digits}f}{'' if self.unit == '×' else ' '}{self.unit}"
        return f"{number} {self.note}" if self.note else number


def figure_of(text: str) -> Figure | None:
    """The figure a cell's text writes ("1.2 s", "4,096 kB", "12.0 MB (mean)", "1.5× the bare page"), or None."""
    written = _WRITTEN.fullmatch(text)
    if written is None:
        return None
    value = float(written["number"].replace(",", ""))
    unit = written["unit"]
    if unit == "kB":
        value, unit = value * 1024, "B"
    return Figure(value, unit, len(written["decimals"] or ""), written["note"] or "")


FIGURES = ("median", "maximum", "again", "server", "floor", "ratio", "target")  # Row's fields that hold a figure


@dataclass(frozen=True)
class Row:
    case: str
    moved: str  # what the case moves, or what it measures
    count: int | None  # moves or samples behind the median
    median: Figure | str  # text only for what is no figure: "failed", or "" for none
    maximum: Figure | str
    ratio: Figure | str  # the median against the case's reference, "" when there is none
    target: Figure | str  # an upper bound: Figure(1.5, "×", 1, "the bare page") is written "≤ 1.5× the bare page"
    met: bool | None  # None: reported only, no target
    server: Figure | str = ""  # page cases: when the server's last message arrived (the rest is the browser drawing)
    floor: Figure | str = ""  # page cases: the floor's median, measured between the case's moves
    # page cases: the median of the presses made once more, back over what the first drew (nothing new to compute)
    again: Figure | str = ""

    def __post_init__(self) -> None:
        """Text that writes a figure becomes that figure (a target's text is an upper bound: "≤ 10 s")."""
        for name in FIGURES:
            text = getattr(self, name)
            if not isinstance(text, str) or (name == "target" and not text.startswith("≤ ")):
                continue
            if (figure := figure_of(text.removeprefix("≤ ") if name == "target" else text)) is not None:
                object.__setattr__(self, name, figure)


def ms(value: float) -> Figure:
    return Figure(value, "ms")


def medians_table(heading: str, timings: dict[str, list[float]], reference: str) -> str:
    """ms each of timings' rows took, as a Markdown table of their medians and their ratio to the reference row's:
    heading names the rows' column, its next the medians'."""
    base = statistics.median(timings[reference])
    lines = [f"| {heading} | key -> settled, median | ratio to {reference} |", "|---|---|---|"]
    lines += [f"| {name} | {statistics.median(times):.0f} ms | {statistics.median(times) / base:.2f}× |"
              for name, times in timings.items()]
    return "\n".join(lines)


def verdict(value: float, limit: float | None) -> bool | None:
    return None if limit is None else value <= limit


def table(rows: list[Row]) -> str:
    header = ["case", "what moves / what is measured", "n", "median", "max", "again", "server", "floor", "ratio",
              "target", "met"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * 3 + "---:|" * 6 + "---|---|"]
    for row in rows:
        met = {True: "met", False: "**not met**", None: ""}[row.met]
        target = f"≤ {row.target}" if isinstance(row.target, Figure) else row.target
        cells = [row.case, row.moved, "" if row.count is None else str(row.count), str(row.median),
                 str(row.maximum), str(row.again), str(row.server), str(row.floor), str(row.ratio), target, met]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine(load_at_start: tuple[float, float, float], browser_version: str | None, seconds: float) -> str:
    """One paragraph: the machine, its load during the run, and the versions measured."""
    return machine_line(machine_facts(load_at_start, browser_version, seconds))


def machine_facts(load_at_start: tuple[float, float, float], browser_version: str | None,
                  seconds: float) -> dict[str, object]:
    """The machine, its 1-minute load average at the start and now, the versions measured, the run's seconds."""
    memory_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                     if line.startswith("MemTotal:"))
    return {"cores": os.cpu_count(), "memory_gb": memory_kb / 2**20, "architecture": platform.machine(),
            "load_at_start": load_at_start[0], "load_at_end": os.getloadavg()[0],
            "python": platform.python_version(),
            **{name: version(name) for name in ("streamlit", "torch", "transformers")},
            "chromium": browser_version, "seconds": round(seconds, 1)}


def machine_line(facts: dict[str, object]) -> str:
    """machine()'s paragraph from machine_facts()."""
    versions = ", ".join(f"{name} {facts[name]}" for name in ("streamlit", "torch", "transformers"))
    chromium = f", Chromium {facts['chromium']}" if facts["chromium"] else ""
    return (f"Machine: {facts['cores']} cores, {facts['memory_gb']:.0f} GB, {facts['architecture']}; load average "
            f"{facts['load_at_start']:.1f} at the start, {facts['load_at_end']:.1f} at the end (1-minute); "
            f"Python {facts['python']}, {versions}{chromium}; {facts['seconds'] / 60:.1f} minutes in all.")
