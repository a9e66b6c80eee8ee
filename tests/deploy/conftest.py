"""The deploy tests run asyncio (harness/session_client.py, harness/classroom.py) and Playwright of their own: the
process's shared Chromium (tests/conftest.py) is closed before a module starts, as Playwright's sync API keeps its
event loop marked as running in this thread while it is open, and asyncio.run() then refuses to start."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def _no_shared_chromium(chromium):
    chromium.close()
