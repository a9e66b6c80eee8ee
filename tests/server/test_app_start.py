"""The tab the App's server asks for as it starts (components/server/app_start.py), where `streamlit run` would open
one for a page script: through the standard library's webbrowser, on the address a reader would type, never on a
headless server or one on a Unix socket.

Each case runs in a Python of its own, whose Streamlit reads its settings from a .streamlit/config.toml as a
deployer's would, and whose BROWSER (webbrowser's own setting) is a script that writes down the address it is
given. tests/browser/test_first_paint_e2e.py sees a whole server do it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ASK = ("from components.server.app_start import open_browser_unless_headless\n"
       "asking = open_browser_unless_headless()\n"
       "print('asked' if asking else 'not asked')\n"
       "asking and asking.join()\n")


def start(tmp_path: Path, settings: str) -> tuple[str, list[str]]:
    """What the start did under these [server]/[browser] settings: "asked" or "not asked", and every address the
    browser was given."""
    opened = tmp_path / "opened"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser.chmod(0o755)
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "config.toml").write_text(settings)
    env = {**os.environ, "BROWSER": str(browser), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("DISPLAY", None)  # as on a server: only BROWSER names a browser
    done = subprocess.run([sys.executable, "-c", ASK], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout.strip(), opened.read_text().split() if opened.exists() else []


@pytest.mark.parametrize(("settings", "address"), [
    ('[server]\nheadless = false\nport = 8612\n', "http://localhost:8612"),
    ('[server]\nheadless = false\nport = 8612\nbaseUrlPath = "/class/"\n', "http://localhost:8612/class"),
    ('[server]\nheadless = false\naddress = "0.0.0.0"\n[browser]\nserverPort = 443\n', "http://localhost:443"),
    ('[server]\nheadless = false\naddress = "127.0.0.1"\nport = 8612\n', "http://127.0.0.1:8612"),
    ('[server]\nheadless = false\naddress = "127.0.0.1"\n[browser]\nserverAddress = "class.example.org"\n'
     'serverPort = 80\n', "http://class.example.org:80"),
], ids=["default", "base-path", "every-address", "one-address", "browser-address"])
def test_a_server_that_is_not_headless_opens_a_tab_where_a_reader_would_type(tmp_path, settings, address):
    assert start(tmp_path, settings) == ("asked", [address])


@pytest.mark.parametrize("settings", ['[server]\nheadless = true\n',
                                      '[server]\nheadless = false\naddress = "unix:///tmp/anatomy.sock"\n'],
                         ids=["headless", "unix-socket"])
def test_a_headless_server_or_one_on_a_socket_asks_for_no_tab(tmp_path, settings):
    assert start(tmp_path, settings) == ("not asked", [])
