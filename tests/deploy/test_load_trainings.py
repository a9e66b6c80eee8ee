"""Trainings pressed at once in a moving class, small: CI's version of `python -m bench.load_test --class train`.

MOVERS students move the one-head view's heatmap while TRAINERS others press Train on the counting view
at the same moment, on a server that runs one training at a time (ATTENTION_ANATOMY_TRAINING_SLOTS=1),
so that all but one wait in line. Through Streamlit's own websocket protocol, as the bench does. Checked:
every training ends, saying how on its page; every move of the others got its finished rerun, and no
page showed an error. No time is asserted: the bench measures the others' moves while the trainings run.
"""

from __future__ import annotations

import asyncio

import pytest

from components.server.turns import SLOTS_ENV
from harness.classroom import plans, run_class, training_plans, warm_up
from harness.server import APP, port_of, server_pid, streamlit_server

pytestmark = pytest.mark.load

MOVERS, TRAINERS = 3, 3
MOVES = 4  # one every 2 s
TRAIN_AFTER_S = 1.0  # while the others move


@pytest.fixture(scope="module")
def trained_class():
    class_plans = plans(MOVERS, MOVES) + training_plans(TRAINERS)
    with streamlit_server(APP, env={SLOTS_ENV: "1"}) as base_url:
        pid = server_pid(port_of(base_url))

        async def run():
            await warm_up(base_url)
            return await run_class(base_url, pid, class_plans, wait_after_s=0, train_after_s=TRAIN_AFTER_S)

        yield class_plans, asyncio.run(run())


def test_every_training_pressed_at_once_finishes_and_says_so(trained_class):
    class_plans, load = trained_class
    trainings = [record.training for plan, record in zip(class_plans, load.records, strict=True)
                 if plan.view == "counting"]
    assert len(trainings) == TRAINERS and None not in trainings, "a trainer's page did not open or press Train"
    assert [training.outcome for training in trainings] == ["finished"] * TRAINERS
    pressed = [training.pressed_at for training in trainings]
    assert max(pressed) - min(pressed) < TRAIN_AFTER_S, "the presses were not made together"


def test_the_others_moves_all_finish_while_the_trainings_run(trained_class):
    class_plans, load = trained_class
    for index, (plan, record) in enumerate(zip(class_plans, load.records, strict=True)):
        assert record.errors == [], f"session {index} ({plan.view} view)"
        assert len(record.move_s) == len(plan.moves), f"session {index}: moves without a finished rerun"
        assert len(record.move_at) == len(record.move_s)
