"""Browser and deploy tests on a machine without Chromium: skipped with the install hint, but under CI
(CI=true) failed, so that a broken install cannot pass as a green run with those tests skipped.

Runs pytest in a subprocess whose PATH holds no `chromium` and no `chromium-headless-shell`, on a few browser and
deploy tests. The tests never start: what is missing is found before their fixtures run, so this takes seconds,
not minutes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHOSEN = ["tests/browser/test_lines_e2e.py", "tests/deploy/test_replicas.py"]
HINT = ("Chromium not found: no `chromium-headless-shell` or `chromium` on PATH. Install them with "
        "`apt-get install -y chromium chromium-headless-shell`")
BROWSERS = ("chromium", "chromium-headless-shell")


def without_chromium(ci: bool) -> dict[str, str]:
    """This environment with every folder that holds a Chromium taken off PATH; CI=true or no CI at all."""
    folders = [folder for folder in os.environ.get("PATH", "").split(os.pathsep)
               if folder and not any(os.access(os.path.join(folder, browser), os.X_OK) for browser in BROWSERS)]
    env = {key: value for key, value in os.environ.items() if key != "CI" and not key.startswith("PYTEST_XDIST")}
    return {**env, "PATH": os.pathsep.join(folders), **({"CI": "true"} if ci else {})}


def run_pytest(env: dict[str, str]) -> tuple[int, str, dict[str, int]]:
    """(exit code, output, {"passed": n, "skipped": n, "error": n, ...}) of pytest on the chosen tests."""
    # In this process (-n 0): a few tests need no workers of their own.
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-rA", *CHOSEN],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]  # pytest's last line; plugins may warn on stderr after it
    counts = {word.rstrip("s"): int(number) for number, word in re.findall(r"(\d+) (\w+)", summary)}
    return done.returncode, output, counts


def test_without_chromium_browser_and_deploy_tests_are_skipped_with_the_install_hint():
    code, output, counts = run_pytest(without_chromium(ci=False))
    assert code == 0, output
    assert counts.get("skipped", 0) >= len(CHOSEN) and set(counts) == {"skipped"}, output
    assert HINT in output, output


def test_under_ci_without_chromium_the_run_fails_and_says_why():
    code, output, counts = run_pytest(without_chromium(ci=True))
    assert code == 1, output
    assert counts.get("error", 0) >= len(CHOSEN) and "passed" not in counts and "skipped" not in counts, output
    assert f"CI=true, so this test must run, but: {HINT}" in output, output
    assert "Traceback" not in output, "the reason, not a stack trace"
