"""The line of heavy work (components/server/turns.py): slots, order, what a waiting student is told, leaving it."""

from __future__ import annotations

import threading
import time

import pytest

from components.server.turns import SLOTS_ENV, Turns, slots_from_environment


def test_at_most_slots_run_at_once_and_the_rest_go_in_the_order_they_came():
    line = Turns(slots=2)
    running, most, order = [0], [0], []
    guard = threading.Lock()

    def work(name: str) -> None:
        with line.turn():
            with guard:
                running[0] += 1
                most[0] = max(most[0], running[0])
                order.append(name)
            time.sleep(0.2)
            with guard:
                running[0] -= 1

    threads = [threading.Thread(target=work, args=(name,)) for name in "abcdef"]
    for arrived, thread in enumerate(threads, start=1):
        thread.start()
        # Each arrives once the one before is in a slot or in line: started 0.05 s apart instead, two threads of a
        # busy machine could wake in the other order.
        deadline = time.monotonic() + 30
        while len(order) + line.waiting < arrived and time.monotonic() < deadline:
            time.sleep(0.001)
    for thread in threads:
        thread.join(30)
    assert most[0] == 2
    assert order == list("abcdef")


def test_a_waiting_student_hears_how_many_are_ahead_and_leaves_the_line_when_stopped():
    line = Turns(slots=1)
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with line.turn():
            inside.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert inside.wait(30)
    told: list[int] = []

    def stop_after_two(ahead: int) -> None:  # a click on Stop ends the student's run while it waits
        told.append(ahead)
        if len(told) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), line.turn(stop_after_two):
        pass
    assert told == [1, 1] and line.waiting == 0
    release.set()
    holder.join(30)
    with line.turn():  # the slot was given back
        assert line.waiting == 0


@pytest.mark.parametrize(("setting", "slots"), [("", None), ("3", 3)])
def test_the_slots_come_from_the_setting_else_the_cores(setting, slots):
    """The cores this process may use: tests/server/test_cpus.py checks them against a quota."""
    from components.server.cpus import available_cpus

    assert slots_from_environment({SLOTS_ENV: setting}) == (slots or available_cpus())


@pytest.mark.parametrize("setting", ["0", "two", "-1"])
def test_a_bad_setting_says_what_to_write(setting):
    with pytest.raises(ValueError, match=f"{SLOTS_ENV} must be a whole number of trainings at once, 1 or more"):
        slots_from_environment({SLOTS_ENV: setting})


def test_a_training_turn_runs_on_one_torch_thread_as_every_heavy_thread_does():
    """The server's line of trainings (shared.training_turns) takes the heavy-work rule: a training whose thread
    came with one torch thread per core still trains on one, beside the students' moves."""
    import torch

    from components.caches import shared
    from components.server.process import TORCH_THREADS

    before = torch.get_num_threads()
    seen = []

    def train() -> None:
        torch.set_num_threads(2)  # what a thread may come with: one per core
        with shared.training_turns().turn():
            seen.append(torch.get_num_threads())

    try:
        thread = threading.Thread(target=train)
        thread.start()
        thread.join()
    finally:
        torch.set_num_threads(before)
    assert seen == [TORCH_THREADS]
