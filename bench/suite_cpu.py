"""Where the test suite's CPU goes: the suite run once, every process's CPU read twice a second, summed by kind.

    python -m bench.suite_cpu [COMMAND …]    (default: python -m pytest, the README's test command)

The suite is CPU-bound on 2 cores (docs/testing.md): only less work shortens it, so the question is whose work.
Prints a Markdown table of the CPU seconds of Chromium's renderers, its GPU and browser processes, Playwright's
driver, the Streamlit servers, pytest and its workers (the AppTest pages and the core's tests), nginx, Redis and
the rest (harness/cpu_by_kind.py); then the wall time, and how busy the machine's cores were (from /proc/stat,
which also counts what lived too briefly to be sampled). Run it from the repository's top, with nothing else on
the machine: every process of the machine is counted.
"""

from __future__ import annotations

import os
import sys

from harness.cpu_by_kind import measure, report


def main() -> int:
    command = sys.argv[1:] or [sys.executable, "-m", "pytest"]
    spent, wall, busy, code = measure(command)
    print(report(spent, wall, busy, os.cpu_count() or 1))
    return code


if __name__ == "__main__":
    sys.exit(main())
