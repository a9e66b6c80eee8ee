"""The server a learner starts (`streamlit run` with the repository's .streamlit/config.toml and no flag about the
source) watches no file.

Streamlit's default watches the page's source for edits. Every new session's first run then walked every module
loaded, torch's and transformers' thousands, to choose what to watch: 0.3 s of the event loop that every other reader
waits on, 0.4 s with the offline decoder loaded (py-spy on the server), 9 s in all for a class of 30 arriving. It
also put 340 inotify watches and 16 threads in the process. The config turns the watching off."""

from __future__ import annotations

from pathlib import Path

from harness.browser import open_session
from harness.server import APP, port_of, server_pid, streamlit_server, wait_until_warm
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS


def inotify_watches(pid: int) -> int:
    """The files and folders a process watches through inotify: a line "inotify wd:…" each in its descriptors' fdinfo
    (man 5 proc)."""
    watches = 0
    for descriptor in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            watches += sum(line.startswith("inotify wd:") for line in descriptor.read_text().splitlines())
        except OSError:  # a descriptor closed while listed
            continue
    return watches


def test_a_learners_server_watches_no_file_once_a_session_has_drawn(chromium, tmp_path):
    with streamlit_server(APP, log_path=tmp_path / "streamlit.log", file_watcher=None) as url:
        pid = server_pid(port_of(url))
        wait_until_warm(pid)
        page = open_session(chromium.browser(), url)
        try:
            watches = inotify_watches(pid)
        finally:
            page.context.close()
    assert watches == 0, f"the server watches {watches} files or folders for edits"
