"""Trainings shared by their settings: one trainer per settings, watchers meanwhile (counted while they watch),
finished runs kept for all."""

from __future__ import annotations

import threading

import pytest

from components.server.shared_runs import SharedRuns


def test_the_first_to_ask_trains_and_the_others_watch_its_run():
    runs = SharedRuns(keep=4)
    with runs.train("a") as live:
        assert live is not None and not live.ended
        with runs.train("a") as second:
            assert second is None, "a second training of the same settings"
        assert runs.under_way("a") is live
        live.latest, live.fraction = "half", 0.5
        assert runs.under_way("a").latest == "half"
        with runs.train("b") as other:
            assert other is not None, "other settings train at once"
        runs.keep_finished("a", "done")
    assert live.ended and runs.under_way("a") is None
    assert runs.finished("a") == "done"
    with runs.train("a") as again:
        assert again is None, "a finished run is not trained again"


def test_a_watcher_is_counted_while_it_watches_however_its_watch_ends():
    runs = SharedRuns(keep=4)
    with runs.watch("a") as nothing:
        assert nothing is None, "no run of these settings is under way"
    with runs.train("a") as live:
        with runs.watch("a") as watched, runs.watch("a"):
            assert watched is live and live.watchers == 2
        assert live.watchers == 0
        with pytest.raises(KeyboardInterrupt), runs.watch("a"):  # a closed tab's run is stopped inside its watch
            raise KeyboardInterrupt
        assert live.watchers == 0


def test_a_run_that_ends_unfinished_is_not_kept_and_the_next_ask_trains():
    runs = SharedRuns(keep=4)
    with pytest.raises(KeyboardInterrupt), runs.train("a") as live:  # a stop, as Streamlit's interrupt ends a run
        raise KeyboardInterrupt
    assert live.ended and runs.under_way("a") is None and runs.finished("a") is None
    with runs.train("a") as again:
        assert again is not None


def test_only_the_newest_finished_runs_are_kept():
    runs = SharedRuns(keep=2)
    for key in "abc":
        runs.keep_finished(key, key.upper())
    assert runs.finished("a") is None and runs.finished("b") == "B"
    runs.keep_finished("d", "D")  # b was just asked for: c goes
    assert runs.finished("c") is None and runs.finished("b") == "B" and runs.finished("d") == "D"
    with pytest.raises(ValueError, match="keep must be 1 or more"):
        SharedRuns(keep=0)


def test_of_many_sessions_asking_at_once_exactly_one_trains():
    runs = SharedRuns(keep=2)
    start, asked = threading.Barrier(8), threading.Semaphore(0)
    trainers = []

    def ask() -> None:
        start.wait()
        with runs.train("same") as live:
            if live is None:
                asked.release()
                return
            trainers.append(live)
            for _ in range(7):  # the run stays under way until every other session has asked
                assert asked.acquire(timeout=10)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert len(trainers) == 1
