"""A `streamlit run` on loopback: started on a free port, asked how it is, stopped with its whole process group.

What the server says of itself comes from /_stcore/metrics (its sessions); its process, its CPU and
its memory are read from /proc (Linux only).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "streamlit_app.py"
STARTUP_TIMEOUT_S = 90.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(script_path: str | os.PathLike, env: dict[str, str] | None = None,
                     log_path: str | os.PathLike | None = None, port: int | None = None,
                     cwd: str | os.PathLike | None = None, headless: bool = True, base_path: str = "",
                     file_watcher: str | None = "none") -> Iterator[str]:
    """Run `streamlit run script` on port (else a free one); yield its base URL; stop it (its whole process group).

    The server's output goes to log_path when given (kept afterwards), else to a temporary file.
    A fixed port lets a test stop a server and start another where open pages will look for it.
    The server runs in cwd (default: the script's folder) and reads the .streamlit/config.toml found there.
    A server that is not headless asks the desktop to open a tab on its page, as on a laptop.
    base_path: Streamlit's server.baseUrlPath ("course/x"); the URL yielded is then the page's, below it.
    file_watcher: server.fileWatcherType; None leaves it to the config.toml the server reads, as `streamlit run`
    on a laptop does.
    """
    script = Path(script_path).resolve()
    port = port or free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", str(script),
        "--server.headless", str(headless).lower(), "--server.port", str(port),
        "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
        # Edits made while the server runs must not pop up "File change. Rerun?" or rerun the page.
        *(["--server.fileWatcherType", file_watcher] if file_watcher else []),
        *(["--server.baseUrlPath", base_path] if base_path else []),
    ]
    server_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    base_url = f"http://127.0.0.1:{port}" + (f"/{base_path.strip('/')}" if base_path else "")
    log = open(log_path, "w+b") if log_path else tempfile.TemporaryFile()  # noqa: SIM115 (closed below)
    with log as output:  # a file, not a pipe: a chatty server can never block on it
        process = subprocess.Popen(command, cwd=cwd or script.parent, env=server_env, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait_for_health(process, base_url, output)
            yield base_url
        finally:
            _stop(process)


SHARED_SERVER_KEY = "browser_tests_server"  # pytest-xdist workerinput's: the file that will hold its address


class ServerForOthers:
    """A streamlit_server() run from a thread of this process for other processes to use: its URL, once it answers,
    is written to url_file (an "error: …" line if it could not start), where served_url() waits for it. pytest-xdist's
    controller starts one for the browser tests of all its workers (tests/conftest.py)."""

    def __init__(self, script_path: str | os.PathLike, folder: Path) -> None:
        self.script_path, self.url_file = script_path, folder / "url"
        self._log_path = folder / "streamlit.log"
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the server, unless it was started already; returns at once."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="server-for-others", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stopping.set()
            self._thread.join(timeout=30)

    def _serve(self) -> None:
        try:
            with streamlit_server(self.script_path, log_path=self._log_path) as url:
                self._publish(url)
                self._stopping.wait()
        except Exception as error:  # noqa: BLE001 (whatever it was, the processes waiting must hear of it)
            self._publish(f"error: {error}")

    def _publish(self, line: str) -> None:
        written = self.url_file.with_suffix(".new")
        written.write_text(line)
        written.replace(self.url_file)  # whole or not at all, for a reader polling it


def served_url(url_file: str | os.PathLike, timeout_s: float = STARTUP_TIMEOUT_S + 30) -> str:
    """The URL a ServerForOthers in another process wrote to url_file, once it is there."""
    url_file = Path(url_file)
    wait_for(url_file.exists, f"the shared server's address in {url_file}", timeout_s=timeout_s)
    line = url_file.read_text()
    if line.startswith("error: "):
        raise RuntimeError(f"the shared server did not start ({url_file.parent / 'streamlit.log'}): "
                           f"{line.removeprefix('error: ')}")
    return line


def metrics(base_url: str) -> dict[str, float]:
    """A server's own session counters from /_stcore/metrics: active (websockets open now), connects
    (new sessions so far) and reconnects (sessions a browser got back after its websocket dropped)."""
    with urllib.request.urlopen(f"{base_url}/_stcore/metrics", timeout=10) as answer:
        text = answer.read().decode()
    values = {}
    for name, pattern in (("active", r"^active_sessions (\S+)$"),
                          ("connects", r'^session_events_total\{type="connect"\} (\S+)$'),
                          ("reconnects", r'^session_events_total\{type="reconnect"\} (\S+)$')):
        found = re.search(pattern, text, re.MULTILINE)
        if found is None:
            raise LookupError(f"{name} missing from {base_url}/_stcore/metrics:\n{text}")
        values[name] = float(found.group(1))
    return values


def get_json(url: str) -> tuple[int, dict]:
    """(HTTP status, JSON body) of one of the App's routes (components/api/routes.py), which never cache."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            assert response.headers["Cache-Control"] == "no-store"
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def port_of(base_url: str) -> int:
    return urllib.parse.urlsplit(base_url).port


def server_pid(port: int) -> int:
    """The id of the `streamlit run` process on port (streamlit_server() yields only the URL)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"streamlit" in argv and b"--server.port" in argv and argv[argv.index(b"--server.port") + 1] == \
                    str(port).encode():
                return int(entry.name)
    raise LookupError(f"no streamlit process on port {port}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    return cpu_and_start(pid)[0]


def cpu_and_start(pid: int) -> tuple[float, int]:
    """A process's user + system CPU seconds so far, and the moment it started (clock ticks since boot: a pid and
    its start name one process, where a pid alone may be reused). OSError once it has ended."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # after the name, which may hold ")"
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, int(fields[19])  # utime, stime; starttime


def memory_mb(pid: int) -> tuple[float, float]:
    """Resident memory now and at its peak (since the process began, or since reset_peak), in MB."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def reset_peak(pid: int) -> bool:
    """Start the kernel's count of the process's peak resident memory (VmHWM) again from now, so that it
    measures what follows: a peak between two samples, which sampling misses. False where Linux refuses."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # 5: reset the peak (Linux 4.0, man 5 proc)
    except OSError:
        return False
    return True


def wait_until_warm(pid: int, timeout_s: float = 180.0) -> None:
    """Wait until a new server's start is done with its own work (the App's lifespan imports torch:
    components/server/app_start.py): torch mapped, and its resident memory steady within 1 MB over a second. What
    is measured after that is what the requests cost."""
    def settled() -> bool:
        if "libtorch" not in Path(f"/proc/{pid}/maps").read_text():
            return False
        before, _ = memory_mb(pid)
        time.sleep(1.0)
        return abs(memory_mb(pid)[0] - before) < 1

    wait_for(settled, "the server's start to import torch and settle", timeout_s=timeout_s, poll_s=0.5)


def wait_for(condition, what: str, timeout_s: float = 20.0, poll_s: float = 0.2) -> None:
    """Poll condition() until it holds (for things outside the page, such as a server's counters)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


def _wait_for_health(process: subprocess.Popen, base_url: str, output) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {process.returncode} before answering:\n"
                               f"{_tail(output)}")
        try:
            with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as answer:
                if answer.read().decode().strip() == "ok":
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"streamlit did not answer {base_url}/_stcore/health within {STARTUP_TIMEOUT_S:.0f} s:\n"
                       f"{_tail(output)}")


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM the server's process group, then SIGKILL whatever is left of it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):  # stragglers in the group, or a leader that ignored SIGTERM
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def _tail(output, limit: int = 4000) -> str:
    output.flush()
    output.seek(0)
    text = output.read().decode(errors="replace")
    return text[-limit:] or "(no output)"
