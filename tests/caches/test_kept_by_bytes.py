"""The store that shares every head of a layer with every session (caches/kept_by_bytes.py): bounded in bytes, the
least recently used out first, the value just made kept whatever its size, and each value made once however many
threads ask for it at once."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from components.caches.kept_by_bytes import KeptByBytes


def by_size(array: np.ndarray) -> int:
    return array.nbytes


def test_values_are_kept_while_they_fit_in_the_bytes_the_least_recently_used_out_first():
    store = KeptByBytes(3000, by_size)
    first, second = store.get("a", lambda: np.zeros(100)), store.get("b", lambda: np.zeros(100))  # 800 bytes each
    assert store.get("a", lambda: np.ones(100)) is first, "kept: the same array, not made again"
    store.get("c", lambda: np.zeros(100))
    assert len(store) == 3 and store.kept_bytes == 2400
    store.get("d", lambda: np.zeros(100))  # 3200 bytes: b, the least recently used, goes
    assert store.get("a", lambda: np.ones(100)) is first
    assert store.get("b", lambda: np.ones(100)) is not second, "b was pushed out: made again"


def test_a_value_larger_than_the_bytes_is_kept_alone():
    store = KeptByBytes(1000, by_size)
    store.get("small", lambda: np.zeros(10))
    large = store.get("large", lambda: np.zeros(1000))  # 8000 bytes
    assert len(store) == 1 and store.get("large", lambda: np.ones(1)) is large


def test_a_value_asked_for_by_several_threads_at_once_is_made_once():
    store = KeptByBytes(10**6, by_size)
    made, got = [], []

    def make():
        made.append(1)
        time.sleep(0.2)  # long enough for the other threads to ask meanwhile
        return np.arange(10)

    threads = [threading.Thread(target=lambda: got.append(store.get("key", make))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and all(value is got[0] for value in got)


def test_a_value_whose_making_failed_is_made_again_next_time():
    store = KeptByBytes(10**6, by_size)

    def fail():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        store.get("key", fail)
    assert len(store) == 0
    assert store.get("key", lambda: np.ones(3)).sum() == 3
