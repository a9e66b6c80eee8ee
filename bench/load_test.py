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

The class itself is run by harness/classroom.py; tests/deploy/test_load.py runs a short one with
the same code, with assertions instead of figures.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys

from harness.classroom import (
    PERIOD_S,
    WAIT_AFTER_S,
    Load,
    Plan,
    Record,
    differences,
    plans,
    run_class,
    run_serially,
    warm_up,
)
from harness.server import APP, port_of, server_pid, streamlit_server


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
