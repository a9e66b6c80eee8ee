"""A real redis-server on loopback, for the class store's tests and benchmarks (Debian's `redis-server` package).

Nothing is saved to disk and nothing but loopback is listened on; the server is stopped with its process.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.server import free_port


def redis_server_path() -> str | None:
    """Debian's redis-server (`apt-get install -y redis-server`)."""
    return shutil.which("redis-server")


@dataclass(frozen=True)
class Redis:
    url: str
    process: subprocess.Popen

    def pause(self) -> None:
        """Stop answering without closing a connection (SIGSTOP): the hardest way for Redis to be down."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[Redis]:
    """Run redis-server on a free loopback port, its log in folder; yield its URL; stop it."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [redis_server_path(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", str(folder), "--logfile", str(folder / "redis.log")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for_port(process, port)
        yield Redis(f"redis://127.0.0.1:{port}/0", process)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGCONT)
            process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_for_port(process: subprocess.Popen, port: int, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with code {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    raise RuntimeError(f"redis-server did not listen on 127.0.0.1:{port} within {timeout_s:.0f} s")
