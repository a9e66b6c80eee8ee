"""A class on one server: sessions that open the page and move layer and head at once, and the same one at a time.

Each session speaks Streamlit's own websocket protocol (session_client.py), so that the 2 cores measure
the server, not thirty Chromiums. The page is the one-head view, whose layer and head are picked on its
heatmap (components/scrub.py): a move is the chart's selection, sent as the browser sends it. What every
page showed is kept as digests (each chart's spec and data, and all the words and figures), so that a
page under load can be compared with the same inputs run alone; the server's CPU and memory are read
around the class.

Used by bench/load_test.py, which prints the figures, and tests/deploy/test_load.py, which asserts on them.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from dataclasses import dataclass, field

from harness.server import cpu_seconds, memory_mb, metrics
from harness.session_client import WebsocketSession

PERIOD_S = 2.0
OPEN_SPACING_S = 0.2  # students come in one after another, not all in the same millisecond
LAYERS, HEADS = 6, 12  # the bundled model's, the page's default
WAIT_AFTER_S = 10.0
SAMPLE_EVERY_S = 0.25
LATE_S = 0.05  # a move that starts this much after its time waited for the one before
CHART = "chart-weights"  # the one-head view's heatmap, whose own inputs pick the layer and head


@dataclass(frozen=True)
class Plan:
    """One student: the page they open, then the moves they make on the chart's inputs, in order."""

    query: dict[str, str]
    moves: tuple[tuple[str, int], ...]  # ("layer" or "head", value)

    def describe(self, move: int) -> str:
        """'layer 2, head 5' after `move` moves (0: the page as opened)."""
        state = {"layer": int(self.query["layer"]), "head": int(self.query["head"])}
        state.update(self.moves[:move])
        return f"layer {state['layer']}, head {state['head']}"


@dataclass
class Record:
    """What happened to one student's session: timings, what each page showed, errors."""

    open_s: float | None = None
    move_s: list[float] = field(default_factory=list)
    late_moves: int = 0
    pages: list[dict[str, str]] = field(default_factory=list)  # page_digest() as opened, then after each move
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Memory:
    """The server's resident memory in MB."""

    before: float  # the model loaded, no session open
    peak: float  # the highest sample while the sessions were open
    high_water: float  # VmHWM: the highest ever, model loading included
    after: float  # as soon as every session had closed
    later: float  # WAIT_AFTER_S after that


@dataclass(frozen=True)
class Load:
    records: list[Record]
    elapsed_s: float  # from the first session opening to the last closing
    cpu_s: float  # the server's CPU time over elapsed_s
    client_cpu_s: float  # this process's: were the sessions themselves a bottleneck?
    memory: Memory


def plans(sessions: int, moves_each: int, who: str = "student") -> list[Plan]:
    """A text of its own for every student, a different start, and a walk over heads and layers.

    Another `who` ("another student") gives other texts for the same walks.
    """
    result = []
    for index in range(sessions):
        text = f"{who} {index} reads how every word of this sentence attends to the others"
        layer, head = index % LAYERS, (index * 5) % HEADS
        query = {"text": text, "layer": str(layer), "head": str(head)}
        moves = []
        for move in range(moves_each):  # the head, and every third move the layer, one step on
            if move % 3 == 2:
                layer = (layer + 1) % LAYERS
                moves.append(("layer", layer))
            else:
                head = (head + 1) % HEADS
                moves.append(("head", head))
        result.append(Plan(query, tuple(moves)))
    return result


def page_digest(session: WebsocketSession) -> dict[str, str]:
    """What the page shows, as a digest per chart and one for all its words and figures.

    A chart's digest covers its Arrow data and its spec: a heatmap holding every head draws the one its
    inputs stand at, and where they start is in the spec.
    """
    digest = {f"chart {name}": _digest(chart.spec.encode(), chart.data.data,
                                       *(dataset.data.data for dataset in chart.datasets))
              for name, chart in session.charts().items()}
    digest["words and figures"] = _digest("\n".join(session.texts()).encode())
    return digest


def _digest(*blobs: bytes) -> str:
    hashed = hashlib.sha256()
    for blob in blobs:
        hashed.update(len(blob).to_bytes(8, "big") + blob)
    return hashed.hexdigest()[:16]


async def open_page(base_url: str, plan: Plan, record: Record, delay_s: float = 0.0) -> WebsocketSession | None:
    await asyncio.sleep(delay_s)
    try:
        session = await WebsocketSession.connect(base_url, plan.query)
    except Exception as error:  # noqa: BLE001 (counted and reported with the figures)
        record.errors.append(f"opening the page: {error!r}")
        return None
    record.open_s = session.open_s
    _look_at(session, record)
    return session


async def make_moves(session: WebsocketSession, plan: Plan, record: Record, period_s: float,
                     phase_s: float = 0.0) -> None:
    """Move the layer and head as planned, one move every period_s (or one after another with period_s 0)."""
    next_move = time.monotonic() + phase_s
    for key, value in plan.moves:
        wait_s = next_move - time.monotonic()
        if wait_s > 0:
            await asyncio.sleep(wait_s)
        elif -wait_s > LATE_S:
            record.late_moves += 1
        try:
            record.move_s.append(await move_on_chart(session, key, value))
        except Exception as error:  # noqa: BLE001 (counted and reported with the figures)
            record.errors.append(f"moving {key} to {value}: {error!r}")
            return
        _look_at(session, record)
        next_move += period_s


async def move_on_chart(session: WebsocketSession, name: str, value: int) -> float:
    """Move the chart's layer or head input to value; return seconds until the rerun finished.

    What the browser then sends is the chart's selection: the input moved, and the other one too once
    the reader has moved it before (an input never touched is left out, and the page keeps its own).
    """
    selection = {**session.chart_selection(CHART), name: [{name: value}]}
    return await session.set_chart_selection(CHART, selection)


def _look_at(session: WebsocketSession, record: Record) -> None:
    record.pages.append(page_digest(session))
    record.errors.extend(f"on the page: {error}" for error in session.errors())


async def run_class(base_url: str, pid: int, class_plans: list[Plan], period_s: float = PERIOD_S,
                    wait_after_s: float = WAIT_AFTER_S) -> Load:
    """Every plan in its own session, all at once; the server's memory around them."""
    before = memory_mb(pid)[0]
    samples = [before]
    sampler = asyncio.create_task(_sample_memory(pid, samples))
    cpu_before, client_cpu_before, began = cpu_seconds(pid), time.process_time(), time.monotonic()
    records = [Record() for _ in class_plans]
    sessions = await asyncio.gather(*(open_page(base_url, plan, record, index * OPEN_SPACING_S)
                                      for index, (plan, record) in enumerate(zip(class_plans, records, strict=True))))
    await asyncio.gather(*(make_moves(session, plan, record, period_s, random.Random(index).uniform(0, period_s))
                           for index, (session, plan, record) in enumerate(zip(sessions, class_plans, records,
                                                                                strict=True))
                           if session is not None))
    await asyncio.gather(*(session.close() for session in sessions if session is not None))
    elapsed_s, cpu_s = time.monotonic() - began, cpu_seconds(pid) - cpu_before
    client_cpu_s = time.process_time() - client_cpu_before
    await asyncio.to_thread(_until_no_sessions, base_url)
    sampler.cancel()
    after, high_water = memory_mb(pid)
    await asyncio.sleep(wait_after_s)
    later = memory_mb(pid)[0]
    return Load(records, elapsed_s, cpu_s, client_cpu_s, Memory(before, max(samples), high_water, after, later))


async def run_serially(base_url: str, class_plans: list[Plan]) -> list[Record]:
    """Every plan in its own session, one session after another, each move as soon as the last finished."""
    records = []
    for plan in class_plans:
        record = Record()
        session = await open_page(base_url, plan, record)
        if session is not None:
            await make_moves(session, plan, record, period_s=0.0)
            await session.close()
        records.append(record)
    return records


async def warm_up(base_url: str) -> None:
    """One session first, so that the model is loaded before anything is measured."""
    session = await WebsocketSession.connect(base_url, {"text": "the model loads once per server"})
    await move_on_chart(session, "head", 1)
    await session.close()
    await asyncio.to_thread(_until_no_sessions, base_url)


def differences(class_plans: list[Plan], loaded: list[Record], serial: list[Record]) -> list[str]:
    """Every page that differs between the run under load and the serial one, and what differs on it."""
    found = []
    for index, (plan, under_load, alone) in enumerate(zip(class_plans, loaded, serial, strict=True)):
        # Not strict: a session that failed has fewer pages; its failure is counted among the errors.
        for move, (page, baseline) in enumerate(zip(under_load.pages, alone.pages, strict=False)):
            if page != baseline:
                what = sorted(name for name in page.keys() | baseline.keys() if page.get(name) != baseline.get(name))
                found.append(f"session {index} after {move} moves ({plan.describe(move)}): {', '.join(what)}")
    return found


def _until_no_sessions(base_url: str, timeout_s: float = 30.0) -> None:
    """Wait until the server has let go of every closed websocket's session."""
    deadline = time.monotonic() + timeout_s
    while metrics(base_url)["active"] > 0 and time.monotonic() < deadline:
        time.sleep(0.1)


async def _sample_memory(pid: int, samples: list[float]) -> None:
    while True:
        samples.append(memory_mb(pid)[0])
        await asyncio.sleep(SAMPLE_EVERY_S)
