"""The pytest marks of a test that needs Chromium, nginx or redis-server, and what happens when they are missing.

Missing, the test is skipped, saying how to install it. Under CI (CI=true), where .ci/run installs them,
the test fails instead with the same words: a broken install must not pass as a run whose browser and
deploy tests were all skipped. tests/conftest.py applies this before a test's fixtures start any server.
The browser itself is driven by harness/browser.py, which the benchmarks share; only the marks are pytest's.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from harness.browser import chromium_path
from harness.nginx import nginx_path
from harness.redis import redis_server_path

# What is missing on this machine, each with how to install it (looked up once, at import).
MISSING = {
    tool: reason for tool, is_missing, reason in (
        ("chromium", chromium_path() is None,
         "Chromium not found: no `chromium-headless-shell` or `chromium` on PATH. Install them with "
         "`apt-get install -y chromium chromium-headless-shell`"),
        ("playwright", importlib.util.find_spec("playwright") is None,
         "Playwright missing: `pip install -r requirements-dev.txt`"),
        ("nginx", nginx_path() is None,
         "nginx not found on PATH or in /usr/sbin: install Debian's package with `apt-get install -y nginx`"),
        ("redis-server", redis_server_path() is None,
         "redis-server not found: install Debian's package with `apt-get install -y redis-server`"),
    ) if is_missing
}

NEEDS_CHROMIUM = [pytest.mark.needs("chromium", "playwright")]
NEEDS_NGINX = [pytest.mark.needs("nginx")]
NEEDS_REDIS = [pytest.mark.needs("redis-server")]
BROWSER_TESTS = [pytest.mark.browser, *NEEDS_CHROMIUM]


def in_ci() -> bool:
    """Whether this run is CI's (CI=true, as CI services set it), where nothing may be skipped for want of a tool."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def skip_or_fail_without_needs(item: pytest.Item) -> None:
    """Skip a test whose `needs` are missing, saying how to install them; under CI, fail it instead."""
    missing = [MISSING[tool] for mark in item.iter_markers("needs") for tool in mark.args if tool in MISSING]
    if not missing:
        return
    if in_ci():
        pytest.fail(f"CI=true, so this test must run, but: {'; '.join(missing)}", pytrace=False)
    pytest.skip("; ".join(missing))
