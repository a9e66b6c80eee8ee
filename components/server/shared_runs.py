"""Trainings shared by their settings across every session of the server: none is trained twice.

A finished run is kept (the newest `keep` of them) and handed to whoever asks for the same settings. A run under
way has one trainer, the session that asked first, which publishes its progress here as it goes; a session that
asks for the same settings meanwhile watches that run instead of training its own, and is counted while it does
(the trainer's page says how many follow it). A run that ends unfinished (stopped, or at the server's time limit) is
not kept: it stays with the session that ran it, and the next ask trains anew.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from dataclasses import dataclass


@dataclass
class Live:
    """A run under way, as its trainer last published it: watchers read it, never write it (their count is kept by
    SharedRuns.watch)."""

    latest: object = None  # the run so far (the trainer's last snapshot), None before its first step
    note: str = "Waiting for a free place on the server…"  # what the trainer's progress bar says
    fraction: float = 0.0  # of its steps, for a watcher's progress bar
    ended: bool = False  # the trainer is done with it: finished (then kept), stopped or gone
    watchers: int = 0  # sessions inside SharedRuns.watch of it now


class SharedRuns:
    """Finished runs by their key (a frozen config), the newest `keep`, and the runs under way."""

    def __init__(self, keep: int) -> None:
        if keep < 1:
            raise ValueError(f"keep must be 1 or more; got {keep}")
        self.keep = keep
        self._lock = threading.Lock()
        self._finished: OrderedDict[Hashable, object] = OrderedDict()
        self._under_way: dict[Hashable, Live] = {}

    def finished(self, key: Hashable) -> object | None:
        """The finished run of these settings, if the server holds one."""
        with self._lock:
            if key in self._finished:
                self._finished.move_to_end(key)
                return self._finished[key]
            return None

    def under_way(self, key: Hashable) -> Live | None:
        """The run of these settings some session is training now, if any."""
        with self._lock:
            return self._under_way.get(key)

    @contextlib.contextmanager
    def train(self, key: Hashable) -> Iterator[Live | None]:
        """Become the trainer of these settings: yields the Live to publish into, or None when another session
        trains them already (then watch under_way(key)) or a finished run exists. Whatever ends the block (a
        finish, a stop, an exception, the session going away), the run is no longer under way after it."""
        with self._lock:
            if key in self._under_way or key in self._finished:
                live = None
            else:
                live = self._under_way[key] = Live()
        if live is None:
            yield None
            return
        try:
            yield live
        finally:
            with self._lock:
                live.ended = True
                self._under_way.pop(key, None)

    @contextlib.contextmanager
    def watch(self, key: Hashable) -> Iterator[Live | None]:
        """Follow the run of these settings under way: yields its Live (None when none is), counted among its
        watchers until the block ends, however it ends."""
        with self._lock:
            live = self._under_way.get(key)
            if live is not None:
                live.watchers += 1
        try:
            yield live
        finally:
            if live is not None:
                with self._lock:
                    live.watchers -= 1

    def keep_finished(self, key: Hashable, run: object) -> None:
        """Keep a finished run for every session, dropping the least recently asked for beyond `keep`."""
        with self._lock:
            self._finished[key] = run
            self._finished.move_to_end(key)
            while len(self._finished) > self.keep:
                self._finished.popitem(last=False)
