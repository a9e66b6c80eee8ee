"""The long-text class of bench/load_test.py, small: that its harness still drives every view it claims to.

One student per view of the long class (one-head, all-heads, neuron, lesson, compare), each with a
text of about 472 tokens and a second sentence, opens the bundled model's page on one `streamlit run`
server and makes MOVES moves of that view's own controls (its chart's inputs, or the lesson's Next and
Previous) through Streamlit's websocket protocol, as `python -m bench.load_test --class long` does
with thirty. Checked:

- the texts are as long as the class says, and none is cut by the page;
- every page opened and followed every move (its URL stands where the student put it, the view's
  chart or step is drawn), with no error on it, and every move changed what the page shows;
- the harness notices a page that did not go where a plan said it would: else the checks above
  could pass on pages that ignore every move.

No time or memory is asserted: those are the benchmark's figures.
"""

from __future__ import annotations

import asyncio

import pytest

from attention.text.encoding import encode
from harness.classroom import (
    LONG_TEXT_TOKENS,
    LONG_VIEWS,
    Plan,
    Record,
    long_plans,
    make_moves,
    open_page,
    run_class,
    warm_up,
)
from harness.server import APP, port_of, server_pid, streamlit_server

pytestmark = pytest.mark.load

MOVES = 2


@pytest.fixture(scope="module")
def long_class():
    """The plans, what happened to each under load, and to a plan that claims more than its move can do."""
    class_plans = long_plans(len(LONG_VIEWS), MOVES)
    lesson = next(plan for plan in class_plans if plan.view == "lesson")
    step = int(lesson.query["step"])
    overreaching = Plan({**lesson.query, "step": str(step)}, (("step", step + 2),))  # one press moves one step
    with streamlit_server(APP) as base_url:

        async def run() -> tuple[list[Record], Record]:
            await warm_up(base_url)
            load = await run_class(base_url, server_pid(port_of(base_url)), class_plans, wait_after_s=0)
            overreached = Record()
            session = await open_page(base_url, overreaching, overreached)
            assert session is not None, overreached.errors
            await make_moves(session, overreaching, overreached, period_s=0.0)
            await session.close()
            return load.records, overreached

        records, overreached = asyncio.run(run())
    return class_plans, records, overreached


def test_texts_are_long_and_uncut(bundled):
    for plan in long_plans(len(LONG_VIEWS), MOVES):
        alone = encode(bundled, plan.query["text"])
        pair = encode(bundled, plan.query["text"], plan.query["text_b"])
        assert LONG_TEXT_TOKENS <= len(alone.tokens[0]) - 2 <= LONG_TEXT_TOKENS + 2, plan.view
        assert len(pair.tokens[0]) <= bundled.max_tokens and pair.dropped_tokens[0] == 0, plan.view


def test_every_view_opens_and_follows_every_move(long_class):
    class_plans, records, _ = long_class
    assert [plan.view for plan in class_plans] == list(LONG_VIEWS)
    for plan, record in zip(class_plans, records, strict=True):
        assert record.errors == [], plan.view
        assert record.open_s is not None, f"{plan.view}: the page did not open"
        assert len(record.move_s) == len(plan.moves) == MOVES, f"{plan.view}: moves without a finished rerun"
        assert len(record.pages) == MOVES + 1
        for made in range(1, MOVES + 1):
            assert record.pages[made] != record.pages[made - 1], (
                f"{plan.view}: move {made} ({plan.describe(made)}) changed nothing on the page")


def test_a_page_that_does_not_follow_the_plan_is_an_error(long_class):
    *_, overreached = long_class
    assert overreached.errors, "a page one step short of the plan went unnoticed"
    assert all("after 1 moves" in error for error in overreached.errors), overreached.errors
