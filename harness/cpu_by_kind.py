"""Whose CPU a command spends: every process of the machine read twice a second while it runs, summed by kind
(Chromium's renderers, its GPU and browser processes, Playwright's driver, Streamlit servers, pytest and its
workers, nginx, Redis, the rest). bench/suite_cpu.py runs the test suite under it. Linux only.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections import Counter
from pathlib import Path

from harness.server import CLOCK_TICKS, cpu_and_start

SAMPLE_S = 0.5


def kind_of(argv: list[str]) -> str:
    """Which kind of the suite's processes a command line is."""
    program = Path(argv[0]).name if argv else ""
    process_type = next((arg.removeprefix("--type=") for arg in argv if arg.startswith("--type=")), None)
    if "chrom" in program:
        return {None: "Chromium: browser process", "renderer": "Chromium: renderers (the pages)",
                "gpu-process": "Chromium: GPU process (compositing)"}.get(process_type, "Chromium: other helpers")
    if program == "node" or any("playwright" in arg for arg in argv[:2]):
        return "Playwright's driver"
    if "streamlit" in argv[:3] and "run" in argv[:4]:
        return "Streamlit servers"
    if program.startswith("nginx") or program.startswith("redis"):
        return program.split(":")[0].split("-")[0]
    if program.startswith("python") and ("pytest" in argv or any("execnet" in arg or "exec(" in arg for arg in argv)):
        return "pytest and its workers"
    return "other"


def _processes() -> dict[tuple[int, int], float]:
    """Every process's CPU seconds so far (user + system), by (pid, start time): a pid may be reused."""
    seconds = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cpu, started = cpu_and_start(int(entry.name))
            except OSError:  # it ended meanwhile
                continue
            seconds[(int(entry.name), started)] = cpu
    return seconds


def _command_line(pid: int) -> list[str]:
    try:
        return command_words(Path(f"/proc/{pid}/cmdline").read_bytes())
    except OSError:
        return []


def command_words(cmdline: bytes) -> list[str]:
    """The words of a /proc/PID/cmdline: NUL-separated, or one string for a process that rewrote its title
    (Chromium's renderers and helpers, nginx's and Redis's processes), split at its spaces."""
    words = cmdline.decode(errors="replace").rstrip("\0").split("\0")
    return words[0].split() if len(words) == 1 else words


def _busy_ticks() -> int:
    """The machine's busy CPU ticks so far, all cores (user, nice, system, irq, softirq)."""
    user, nice, system, _idle, _iowait, irq, softirq = map(int, Path("/proc/stat").read_text().split()[1:8])
    return user + nice + system + irq + softirq


def measure(command: list[str]) -> tuple[Counter, float, float, int]:
    """Run command; return (CPU seconds by kind, wall seconds, the machine's busy CPU seconds, its exit code)."""
    before, kinds, last = _processes(), {}, {}
    busy, start = _busy_ticks(), time.monotonic()
    run = subprocess.Popen(command)
    while run.poll() is None:
        for key, seconds in _processes().items():
            if key not in kinds:
                kinds[key] = kind_of(_command_line(key[0]))
            last[key] = seconds
        time.sleep(SAMPLE_S)
    wall, busy = time.monotonic() - start, (_busy_ticks() - busy) / CLOCK_TICKS
    spent = Counter()
    for key, seconds in last.items():
        spent[kinds[key]] += seconds - before.get(key, 0.0)
    return spent, wall, busy, run.returncode


def report(spent: Counter, wall: float, busy: float, cores: int) -> str:
    total = sum(spent.values())
    rows = [f"| {kind} | {seconds:,.0f} | {seconds / total:.0%} |" for kind, seconds in spent.most_common()
            if seconds >= 0.5]
    return "\n".join(["| processes | CPU s | share |", "|---|---|---|", *rows,
                      f"| sampled, in all | {total:,.0f} | |", "",
                      f"Wall {wall:,.0f} s ({wall / 60:.1f} min); the machine's cores busy {busy:,.0f} CPU s, "
                      f"{busy / (wall * cores):.0%} of {cores} cores."])
