"""A class on one server: sessions that move sliders at once, through Streamlit's own websocket protocol.

Starts one `streamlit run streamlit_app.py` on loopback and opens SESSIONS real sessions on it
(harness/session_client.py speaks the frontend's websocket protocol without a browser, so that the
2 cores measure the server, not thirty Chromiums). Each session opens the page with a text of its
own (so that no cache answers for another), then moves a slider every PERIOD_S seconds for
DURATION_S seconds: the head slider, and every third move the layer slider. Prints, asserts nothing:

- errors: a run that failed or timed out, or a page that shows an error (target 0);
- move -> finished rerun: from sending the slider's new value to the run's script_finished,
  p50/p95/max over all moves (target p95 <= 1 s on the 2-core development machine);
- the server's CPU per move, and its resident memory: with the model loaded before the sessions,
  the peak while they ran, and after they closed (at once and WAIT_AFTER_S later);
- a serial baseline: the same sessions with the same inputs again, one at a time, on a fresh
  server (so that nothing cached under load can answer), and whether every page equals the page
  under load: the charts' data bit for bit, and every word and figure.

    python -m bench.load_test [sessions] [duration_s]      (defaults: 30 sessions, 60 s)

tests/deploy/test_load.py runs a short version of the same code with assertions.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.load_proxy import cpu_seconds, memory_mb
from harness.server import metrics, port_of, server_pid, streamlit_server
from harness.session_client import WebsocketSession

APP = Path(__file__).resolve().parents[1] / "streamlit_app.py"
PERIOD_S = 2.0
OPEN_SPACING_S = 0.2  # students come in one after another, not all in the same millisecond
LAYERS, HEADS = 6, 12  # the bundled model's, the page's default
WAIT_AFTER_S = 10.0
SAMPLE_EVERY_S = 0.25
LATE_S = 0.05  # a move that starts this much after its time waited for the one before


@dataclass(frozen=True)
class Plan:
    """One student: the page they open, then the slider moves they make, in order."""

    query: dict[str, str]
    moves: tuple[tuple[str, int], ...]  # (slider key, value)

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
    """What the page shows, as a digest per chart (its Arrow data) and one for all its words and figures."""
    digest = {f"chart {name}": _digest(chart.data.data, *(dataset.data.data for dataset in chart.datasets))
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
    """Move the sliders as planned, one move every period_s (or one after another with period_s 0)."""
    next_move = time.monotonic() + phase_s
    for key, value in plan.moves:
        wait_s = next_move - time.monotonic()
        if wait_s > 0:
            await asyncio.sleep(wait_s)
        elif -wait_s > LATE_S:
            record.late_moves += 1
        try:
            record.move_s.append(await session.set_slider(key, value))
        except Exception as error:  # noqa: BLE001 (counted and reported with the figures)
            record.errors.append(f"moving {key} to {value}: {error!r}")
            return
        _look_at(session, record)
        next_move += period_s


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
    await session.set_slider("head", 1)
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


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile: p95 of 600 moves is the 570th fastest."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(fraction * len(ordered)) - 1))]


def report(class_plans: list[Plan], load: Load, serial: list[Record], period_s: float, load_average: float) -> None:
    records = load.records
    moves = [seconds * 1000 for record in records for seconds in record.move_s]
    opens = [record.open_s * 1000 for record in records if record.open_s is not None]
    planned = sum(len(plan.moves) for plan in class_plans)
    errors = [f"session {index}: {error}" for index, record in enumerate(records) for error in record.errors]
    late = sum(record.late_moves for record in records)
    print(f"\n{len(class_plans)} sessions on one server, one slider move each every {period_s:.0f} s "
          f"({len(moves)} of {planned} moves in {load.elapsed_s:.0f} s; load average {load_average:.1f} at the "
          f"start, {os.cpu_count()} cores)")
    print(f"errors: {len(errors)}")
    for error in errors[:20]:
        print(f"  {error}")
    if opens:
        print(f"opening the page (first run, the text's forward pass): p50 {statistics.median(opens):.0f} ms, "
              f"max {max(opens):.0f} ms")
    if moves:
        print(f"move -> finished rerun: p50 {percentile(moves, 0.5):.0f} ms, p95 {percentile(moves, 0.95):.0f} ms, "
              f"max {max(moves):.0f} ms (target p95 <= 1000 ms); {late} moves started late, the one before "
              f"still running")
        per_move_s = load.cpu_s / len(moves)
        print(f"server CPU: {load.cpu_s:.1f} s in {load.elapsed_s:.0f} s ({load.cpu_s / load.elapsed_s:.2f} cores), "
              f"{1000 * per_move_s:.0f} ms per move (openings included): one core carries about "
              f"{period_s / per_move_s:.0f} sessions moving every {period_s:.0f} s; the sessions' own client used "
              f"{load.client_cpu_s:.1f} s")
    memory = load.memory
    print(f"server memory (RSS): {memory.before:.0f} MB before (model loaded, no session), peak {memory.peak:.0f} MB "
          f"while the sessions ran (VmHWM {memory.high_water:.0f} MB, model loading included), "
          f"{memory.after:.0f} MB after they closed, {memory.later:.0f} MB {WAIT_AFTER_S:.0f} s later")
    serial_moves = [seconds * 1000 for record in serial for seconds in record.move_s]
    if serial_moves:
        print(f"serial baseline (fresh server, one session at a time): move -> finished rerun "
              f"p50 {percentile(serial_moves, 0.5):.0f} ms, max {max(serial_moves):.0f} ms")
    compared = sum(min(len(loaded.pages), len(alone.pages)) for loaded, alone in zip(records, serial, strict=True))
    different = differences(class_plans, records, serial)
    serial_errors = sum(len(record.errors) for record in serial)
    print(f"results under load equal the serial results: {'yes' if not different else 'NO'} "
          f"({compared - len(different)} of {compared} pages equal; {serial_errors} errors in the serial run)")
    for line in different[:20]:
        print(f"  differs: {line}")


def main() -> None:
    sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    duration_s = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    class_plans = plans(sessions, moves_each=max(1, round(duration_s / PERIOD_S)))
    with streamlit_server(APP) as base_url:
        pid = server_pid(port_of(base_url))
        asyncio.run(warm_up(base_url))
        load_average = os.getloadavg()[0]
        load = asyncio.run(run_class(base_url, pid, class_plans))
    print("under load: done; now the same inputs one session at a time, on a fresh server", file=sys.stderr)
    with streamlit_server(APP) as base_url:
        serial = asyncio.run(run_serially(base_url, class_plans))
    report(class_plans, load, serial, PERIOD_S, load_average)


if __name__ == "__main__":
    main()
