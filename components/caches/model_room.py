"""The room the models' weights share: every model the server holds at once counts, whichever session loaded it.

The memory budget leaves the models' weights one room beside the bundled model's (models.model_room_bytes). A model
is loaded only if its weights fit in what the models loaded already leave of it; else it is refused with a
ModelLoadError that names them, and the page goes back to the bundled model with that notice. The model cache
says when it drops a model (st.cache_resource's on_release: pushed out as least recently used, or cleared), and
the room it took is free again. No Streamlit here: caches/models.model calls reserved() and forget().

Refused, not another model pushed out to make room: a cache hit calls none of our code, so which model was used
least recently is not known here (only the order they were loaded in), and a model pushed out while other pages
use it is loaded again on their next run, pushing this one out: two groups of students on two models that do
not fit together would each load 440 MB at every move.

The records are not bounded by the cache's number of entries (oldest loaded out): the cache pushes out the least
recently *used* model, which need not be the oldest loaded, and a record dropped for a model still held would
let the next one in over the budget. A record goes only when the cache says so. Were a release ever missed
(Streamlit replaces a function's whole cache, without releasing, when its decorator's parameters change: a code
change), the model would be counted too long: more refusals, never more memory, until it is loaded again.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from attention.models.loading import ModelLoadError, check_fits
from components.caches.memory_budget import MEMORY_ENV

MB = 2**20


@dataclass(eq=False)
class _Reservation:
    """One load's claim on the room; compared by identity, so a failed load gives back its own claim only."""

    weights_bytes: int


class LoadedWeights:
    """The weights' bytes of every model loaded, by name. One per server process, shared by every session's
    thread: each reservation is checked and recorded in one step, so two models loading at once cannot both
    take the last of the room."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, _Reservation] = {}

    @contextlib.contextmanager
    def reserved(self, name: str, weights_bytes: int, room_bytes: int) -> Iterator[None]:
        """Count name's weights in for the block, which loads the model, and after it, until forget(name);
        counted out again if the block raises (a model that failed to load takes no room).

        ModelLoadError, before the block runs, when they do not fit in room_bytes beside the models held: the
        core's notice when they would not fit alone. weights_bytes 0 (the bundled model, which the room is
        what is left beside) is never refused nor counted.
        """
        if not weights_bytes:
            yield
            return
        reservation = self._reserve(name, weights_bytes, room_bytes)
        try:
            yield
        except BaseException:
            with self._lock:
                if self._held.get(name) is reservation:
                    del self._held[name]
            raise

    def forget(self, name: str) -> None:
        """The cache no longer holds name: its room is free (nothing happens for a name not held)."""
        with self._lock:
            self._held.pop(name, None)

    def held(self) -> dict[str, int]:
        """{name: bytes of weights} of the models counted now."""
        with self._lock:
            return {name: reservation.weights_bytes for name, reservation in self._held.items()}

    def _reserve(self, name: str, weights_bytes: int, room_bytes: int) -> _Reservation:
        check_fits(name, weights_bytes, room_bytes)
        with self._lock:
            # name's own earlier record is no other model: the cache does not hold it, or it would not be loading
            beside = {other: held.weights_bytes for other, held in self._held.items() if other != name}
            if weights_bytes > room_bytes - sum(beside.values()):
                raise ModelLoadError(_refusal(name, weights_bytes, room_bytes, beside))
            reservation = self._held[name] = _Reservation(weights_bytes)
            return reservation


def _refusal(name: str, weights_bytes: int, room_bytes: int, beside: dict[str, int]) -> str:
    loaded = "; ".join(f"{other!r}, {size / MB:,.0f} MB" for other, size in beside.items())
    return (f"{name!r} has {weights_bytes / MB:,.0f} MB of weights and does not fit beside the models this server "
            f"has loaded already for its pages ({loaded}): they take {sum(beside.values()) / MB:,.0f} MB of the "
            f"{room_bytes / MB:,.0f} MB its memory budget leaves for models beside the bundled one. Keep working "
            f"with one of those, or ask whoever runs the server to give it more memory ({MEMORY_ENV}).")


# This server process's models. Here rather than in models.py: a models.py reloaded while the server runs keeps
# its model cache (and the release hook it was made with), and must keep counting the same models.
LOADED = LoadedWeights()
