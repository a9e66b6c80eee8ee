"""Heavy work that waits its turn: at most a few trainings at once on the server, the others in line.

Training the counting head takes the CPU for seconds. With two cores, five students pressing Train at
once would slow each other and everyone's slider moves alike; here at most `slots` run at once, first
come first served, and a student waiting is told, every POLL_S, how many are ahead. Waiting happens in
the student's own script run, so a click on Stop or any other control ends the wait as it ends a run.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from components.server import cpus

SLOTS_ENV = "ATTENTION_ANATOMY_TRAINING_SLOTS"
POLL_S = 0.5


def slots_from_environment(environ=os.environ, cgroup_root: Path = cpus.CGROUP_ROOT) -> int:
    """The setting, else the cores this process may use (server/cpus.py); ValueError naming the setting (this one
    or the cores') for anything but a whole number ≥ 1."""
    setting = environ.get(SLOTS_ENV, "").strip()
    if not setting:
        return cpus.usable_cpus(environ, cgroup_root)
    if not setting.isdigit() or int(setting) < 1:
        raise ValueError(f"{SLOTS_ENV} must be a whole number of trainings at once, 1 or more; got {setting!r}")
    return int(setting)


class Turns:
    """A line of work, `slots` of it running at once, in the order it came."""

    def __init__(self, slots: int, on_take: Callable[[], None] | None = None) -> None:
        """on_take: run in the thread whose turn has just come, before its work."""
        if slots < 1:
            raise ValueError(f"slots must be 1 or more; got {slots}")
        self.slots, self.on_take = slots, on_take
        self._changed = threading.Condition()
        self._running = 0
        self._line: list[object] = []  # tickets waiting, first come first

    @property
    def waiting(self) -> int:
        with self._changed:
            return len(self._line)

    @contextlib.contextmanager
    def turn(self, on_wait: Callable[[int], None] = lambda ahead: None) -> Iterator[None]:
        """Wait in line, then hold a slot while the block runs. on_wait(ahead) is called with how many are
        ahead (running ones included) before each wait, from this thread and outside the line's lock: it may
        draw, and whatever it raises leaves the line."""
        ticket = object()
        with self._changed:
            self._line.append(ticket)
        try:
            while True:
                with self._changed:
                    if self._running < self.slots and self._line[0] is ticket:
                        self._line.pop(0)
                        self._running += 1
                        break
                    ahead = self._line.index(ticket) + self._running
                on_wait(ahead)
                with self._changed:
                    self._changed.wait(POLL_S)
        except BaseException:
            with self._changed:
                if ticket in self._line:
                    self._line.remove(ticket)
                    self._changed.notify_all()
            raise
        try:
            if self.on_take is not None:
                self.on_take()
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()
