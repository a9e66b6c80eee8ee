"""A route's wait for a slot of heavy work is bounded (components/server/slots.py: held_within): with every slot
held, it says so after its wait instead of holding one of the server's worker threads for as long as it takes, and
it takes a slot that comes free within it."""

from __future__ import annotations

import threading

import pytest

from components.server.slots import NoSlotFree, ThreadSlots


def hold_the_only_slot(slots: ThreadSlots, release: threading.Event) -> threading.Thread:
    taken = threading.Event()

    def holder() -> None:
        with slots.held():
            taken.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    assert taken.wait(30)
    return thread


def test_with_every_slot_held_a_bounded_wait_says_no_slot_came_free():
    slots, release = ThreadSlots("heavy-work", 1), threading.Event()
    holder = hold_the_only_slot(slots, release)
    try:
        with pytest.raises(NoSlotFree, match="no heavy-work slot came free in 0.2 s"), slots.held_within(0.2):
            pytest.fail("the block ran without a slot")
    finally:
        release.set()
        holder.join()
    with slots.held_within(0.2):  # free again
        pass


def test_a_slot_that_comes_free_within_the_wait_is_taken_and_given_back():
    slots, release = ThreadSlots("heavy-work", 1), threading.Event()
    holder = hold_the_only_slot(slots, release)
    threading.Timer(0.2, release.set).start()
    with slots.held_within(30):
        holder.join(30)
        assert not holder.is_alive()
    with slots.held_within(0.2):
        pass


def test_a_thread_that_holds_a_slot_does_not_wait_again_inside_it():
    slots = ThreadSlots("heavy-work", 1)
    with slots.held(), slots.held_within(0.01):  # the caches' own heavy_work nests inside the route's
        pass
