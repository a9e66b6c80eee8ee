"""A short class on one server: CI's version of bench/load_test.py, with assertions instead of figures.

SESSIONS sessions open the page on one `streamlit run` server, each with a text of its own, and
move the head (every third move the layer) on the heatmap's own inputs every 2 s for about 12 s, all
at once, through Streamlit's own websocket protocol (harness/session_client.py): each move sends the
chart's selection, as the browser does. The same sessions then run one at a time on a second, fresh server, so
that nothing cached under load can answer for the baseline (run meanwhile: its pages do not
depend on time). Then a second class with other texts comes to the first server. Checked:

- every session opened, every move got its finished rerun, and no page showed an error;
- every page under load equals the page of the same inputs run one by one (the charts' data bit
  for bit, every word and figure): the model shared between the sessions' threads gives the same
  numbers as when it serves one session at a time;
- the server lets go of closed sessions, and its memory does not keep growing: the second class
  adds much less than the first (which filled the caches, bounded by their max_entries), where
  anything kept per move or per session would add as much again;
- the numbers on the page are the core's: a page's attention weights equal build_trace's.

No time is asserted: speed is measured by the benchmark, never in tests.
"""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

from harness.classroom import CHART, Load, Plan, Record, move_on_chart, plans, run_class, run_serially, warm_up
from harness.server import APP, metrics, port_of, server_pid, streamlit_server
from harness.session_client import open_session
from tests.pages import chart_matrix, chart_picks, weights_of

pytestmark = [pytest.mark.load, pytest.mark.long]

SESSIONS = 8
MOVES = 6  # one every 2 s: about 12 s of moving
# The second class may add this much (MB) beyond half of what the first added: room for the
# allocator's arenas and the two minutes a closed session is kept for a reconnect, far below
# what keeping a trace or a page per move would add (8 sessions × 7 pages).
MEMORY_SLACK_MB = 24.0


@dataclass(frozen=True)
class Runs:
    plans: list[Plan]
    load: Load  # the first class, on the server under test
    serial: list[Record]  # the same plans one at a time, on a fresh server
    again: Load  # a second class with other texts, on the server under test
    base_url: str


@pytest.fixture(scope="module")
def runs():
    first, second = plans(SESSIONS, MOVES), plans(SESSIONS, MOVES, who="another student")
    with ExitStack() as stack:
        base_url = stack.enter_context(streamlit_server(APP))
        baseline_url = stack.enter_context(streamlit_server(APP))
        pid = server_pid(port_of(base_url))

        async def classes() -> tuple[Load, list[Record], Load]:
            await asyncio.gather(warm_up(base_url), warm_up(baseline_url))
            load, serial = await asyncio.gather(run_class(base_url, pid, first, wait_after_s=0),
                                                run_serially(baseline_url, first))
            return load, serial, await run_class(base_url, pid, second, wait_after_s=0)

        yield Runs(first, *asyncio.run(classes()), base_url=base_url)


def test_every_move_finished_without_errors(runs):
    for load in (runs.load, runs.again):
        for index, (plan, record) in enumerate(zip(runs.plans, load.records, strict=True)):
            assert record.errors == [], f"session {index}"
            assert record.open_s is not None, f"session {index} did not open"
            assert len(record.move_s) == len(plan.moves), f"session {index}: moves without a finished rerun"
    assert all(record.errors == [] for record in runs.serial)


def test_results_under_load_equal_serial_results(runs):
    for index, (plan, loaded, alone) in enumerate(zip(runs.plans, runs.load.records, runs.serial, strict=True)):
        assert len(loaded.pages) == len(alone.pages) == len(plan.moves) + 1
        for move, (page, baseline) in enumerate(zip(loaded.pages, alone.pages, strict=True)):
            assert page == baseline, f"session {index} after {move} moves ({plan.describe(move)})"


def test_closed_sessions_are_let_go_and_memory_stops_growing(runs):
    assert metrics(runs.base_url)["active"] == 0
    first, second = runs.load.memory, runs.again.memory
    added_by_first, added_by_second = first.after - first.before, second.after - first.after
    assert added_by_second <= added_by_first / 2 + MEMORY_SLACK_MB, (
        f"the first class added {added_by_first:.0f} MB, the second {added_by_second:.0f} MB more")


def test_pages_show_the_cores_numbers(runs, bundled):
    plan = runs.plans[1]
    key, value = plan.moves[0]

    async def weights_on_the_page() -> tuple[np.ndarray, dict[str, int], list[str]]:
        async with open_session(runs.base_url, plan.query) as session:
            await move_on_chart(session, key, value)
            # tests/pages.py reads AppTest's charts, which wrap the same VegaLiteChart proto, and find a
            # moved chart's selection in the session state: here, the selection this client sent.
            chart = SimpleNamespace(proto=session.charts()[CHART], root=SimpleNamespace(
                session_state={CHART: {"selection": session.chart_selection(CHART)}}))
            return chart_matrix(chart), chart_picks(chart), session.texts()

    shown, picks, texts = asyncio.run(weights_on_the_page())
    expected = {"layer": int(plan.query["layer"]), "head": int(plan.query["head"]), key: value}
    assert picks == expected
    assert f"Layer {expected['layer']}, head {expected['head']}" in texts, "the page did not follow the chart"
    np.testing.assert_allclose(shown, weights_of(bundled, plan.query["text"], **picks), rtol=1e-5, atol=1e-6)
