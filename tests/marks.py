"""The pytest marks of a test that drives Chromium: skipped, saying how to install what is missing.

The browser itself is driven by harness/browser.py, which the benchmarks share; only the marks are pytest's.
"""

from __future__ import annotations

import importlib.util

import pytest

from harness.browser import chromium_path

NEEDS_CHROMIUM = [
    pytest.mark.skipif(chromium_path() is None,
                       reason="Chromium not found at /usr/bin/chromium: install it with `apt-get install -y chromium`"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None,
                       reason="Playwright missing: `pip install -r requirements-dev.txt`"),
]
BROWSER_TESTS = [pytest.mark.browser, *NEEDS_CHROMIUM]
