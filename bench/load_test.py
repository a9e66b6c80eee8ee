"""A class on one server: sessions that move the page's controls at once, through Streamlit's own websocket protocol.

Starts one `streamlit run streamlit_app.py` on loopback and opens SESSIONS real sessions on it
(harness/session_client.py speaks the frontend's websocket protocol without a browser, so that the
2 cores measure the server, not thirty Chromiums). Each session opens the page with a text of its
own (so that no cache answers for another), then moves a control every PERIOD_S seconds for
DURATION_S seconds. Two classes (harness/classroom.py):

- short (the default): 15-token texts on the one-head view, the head moved on its chart, and every
  third move the layer; students come in 0.2 s apart;
- long: a text of about 472 tokens and a second sentence for every student, on the
  one-head, all-heads, neuron, lesson and compare views in turn, each moving that view's controls
  (its chart's inputs, or the lesson's Next and Previous); students come in 1 s apart;
- train: the short class, but TRAINERS of its students are on the counting view and press
  Train all at once, TRAIN_AFTER_S into the class, while the others move their sliders.

Prints, asserts nothing:

- errors: a run that failed or timed out, a page that shows an error, or one that did not follow a
  move or lacks its chart (target 0);
- move -> finished rerun: from sending the move to the run's script_finished, p50/p95/max over all
  moves and per view (target p95 <= 1 s on the 2-core development machine);
- the server's CPU per move, and its resident memory: with the model loaded before the sessions,
  the peak while they ran (the kernel's count, VmHWM, started again as they begin: samples every
  0.25 s missed 15-20 MB of it), and after they closed (at once and WAIT_AFTER_S later);
- for the train class: how each training ended (finished, or the page's word of why not) and how long
  its press took, its wait in line included; and the others' moves made while any training ran;
- a serial baseline (by default for the short class only; it takes many minutes for the long one):
  the same sessions with the same inputs again, one at a time, on a fresh server (so that nothing
  cached under load can answer), and whether every page equals the page under load: the charts'
  data bit for bit, and every word and figure.

The model is the bundled one, or with --model bert-base-random a bert-base-sized checkpoint with
random weights (bench/checkpoints.py), built in a temporary folder and offered to the page through
ATTENTION_ANATOMY_MODEL_DIRS; every session opens it with model=<folder>.

    python -m bench.load_test [sessions] [duration_s]      (defaults: 30 sessions, 60 s; short class)
    python -m bench.load_test --class long --model bert-base-random
    python -m bench.load_test --class train

The class itself is run by harness/classroom.py; tests/deploy/test_load.py and
tests/deploy/test_load_long_texts.py run short ones with the same code, with assertions instead of figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from bench import checkpoints
from harness.classroom import (
    LONG_OPEN_SPACING_S,
    OPEN_SPACING_S,
    PERIOD_S,
    SAMPLE_EVERY_S,
    TRAIN_AFTER_S,
    WAIT_AFTER_S,
    Load,
    Plan,
    Record,
    differences,
    long_plans,
    plans,
    run_class,
    run_serially,
    training_plans,
    warm_up,
)
from harness.server import APP, port_of, server_pid, streamlit_server

MODEL_DIRS_ENV = "ATTENTION_ANATOMY_MODEL_DIRS"  # components/caches/models.py: local checkpoints the page offers
MODELS = ("bundled", "bert-base-random")
# The target for the peak resident memory for the long class, in MB.
MEMORY_TARGET_MB = {"bundled": 800, "bert-base-random": 1500}
MOVE_TARGET_MS = 1000
TRAINERS = 5  # five Train presses at once, the class's other students moving sliders


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile: p95 of 600 moves is the 570th fastest."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(fraction * len(ordered)) - 1))]


def spread(moves_ms: list[float]) -> str:
    return (f"p50 {percentile(moves_ms, 0.5):.0f} ms, p95 {percentile(moves_ms, 0.95):.0f} ms, "
            f"max {max(moves_ms):.0f} ms")


def report(args: argparse.Namespace, class_plans: list[Plan], load: Load, serial: list[Record] | None,
           load_average: float) -> None:
    records = load.records
    moves = [seconds * 1000 for record in records for seconds in record.move_s]
    opens = [record.open_s * 1000 for record in records if record.open_s is not None]
    planned = sum(len(plan.moves) for plan in class_plans)
    errors = [f"session {index} ({plan.view} view): {error}"
              for index, (plan, record) in enumerate(zip(class_plans, records, strict=True))
              for error in record.errors]
    late = sum(record.late_moves for record in records)
    print(f"\n{len(class_plans)} sessions of the {args.class_name} class on one server, {args.model} model, "
          f"one move each every {PERIOD_S:.0f} s ({len(moves)} of {planned} moves in {load.elapsed_s:.0f} s; "
          f"load average {load_average:.1f} at the start, {os.cpu_count()} cores)")
    print(f"errors: {len(errors)}")
    for error in errors[:20]:
        print(f"  {error}")
    if opens:
        print(f"opening the page (first run, the text's forward pass): p50 {statistics.median(opens):.0f} ms, "
              f"max {max(opens):.0f} ms")
    if moves:
        print(f"move -> finished rerun: {spread(moves)} (target p95 <= {MOVE_TARGET_MS} ms); {late} moves "
              f"started late, the one before still running")
        views = sorted({plan.view for plan in class_plans}, key=[plan.view for plan in class_plans].index)
        for view in views if len(views) > 1 else ():
            view_moves = [seconds * 1000 for plan, record in zip(class_plans, records, strict=True)
                          if plan.view == view for seconds in record.move_s]
            if view_moves:
                print(f"  {view} view: {spread(view_moves)} ({len(view_moves)} moves)")
        per_move_s = load.cpu_s / len(moves)
        print(f"server CPU: {load.cpu_s:.1f} s in {load.elapsed_s:.0f} s ({load.cpu_s / load.elapsed_s:.2f} cores), "
              f"{1000 * per_move_s:.0f} ms per move (openings included): one core carries about "
              f"{PERIOD_S / per_move_s:.0f} sessions moving every {PERIOD_S:.0f} s; the sessions' own client used "
              f"{load.client_cpu_s:.1f} s")
    if args.class_name == "train":
        report_trainings(class_plans, records)
    memory = load.memory
    target = f" (the target for this class: <= {MEMORY_TARGET_MB[args.model]} MB)" \
        if args.class_name == "long" else ""
    how = "sampled, the kernel's peak unavailable" if memory.high_water is None else \
        f"the kernel's; sampled every {SAMPLE_EVERY_S} s: {memory.sampled:.0f} MB"
    print(f"server memory (RSS): {memory.before:.0f} MB before (model loaded, no session), peak {memory.peak:.0f} MB "
          f"while the sessions ran ({how}){target}, {memory.after:.0f} MB after they closed, "
          f"{memory.later:.0f} MB {WAIT_AFTER_S:.0f} s later")
    if serial is None:
        print("serial baseline: skipped (--no-baseline, the long class's default: one session at a time takes "
              "many minutes)")
        return
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


def report_trainings(class_plans: list[Plan], records: list[Record]) -> None:
    """How every training ended and took, and how the others' moves fared while any of them ran."""
    trainings = [record.training for record in records if record.training is not None]
    pressed = sum(plan.view == "counting" for plan in class_plans)
    ended = [training for training in trainings if training.finished_at is not None]
    finished = sum(training.outcome == "finished" for training in ended)
    print(f"trainings: {len(trainings)} of {pressed} pressed at once, {TRAIN_AFTER_S:.0f} s into the class; "
          f"{finished} finished, {len(ended) - finished} said why they stopped, {len(trainings) - len(ended)} failed")
    for training in trainings:
        took = f"{training.finished_at - training.pressed_at:.1f} s" if training.finished_at else "-"
        print(f"  press -> finished run {took} (its wait in line included): {training.outcome}")
    if not ended:
        return
    start, end = min(t.pressed_at for t in trainings), max(t.finished_at for t in ended)
    during = [seconds * 1000 for record in records for at, seconds in zip(record.move_at, record.move_s, strict=False)
              if start <= at <= end]
    if during:
        print(f"  the others' moves sent while a training ran ({end - start:.1f} s): {spread(during)} "
              f"({len(during)} moves; target p95 <= {MOVE_TARGET_MS} ms)")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.load_test", description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="?", type=int, default=30, help="students (default: 30)")
    parser.add_argument("duration_s", nargs="?", type=float, default=60.0,
                        help=f"seconds of moving, one move every {PERIOD_S:.0f} s (default: 60)")
    parser.add_argument("--class", dest="class_name", choices=("short", "long", "train"), default="short",
                        help="short: 15-token texts on the one-head view (default); long: about 472 tokens and "
                             f"a second sentence, on five views; train: the short class, {TRAINERS} of whom "
                             "press Train on the counting view at once")
    parser.add_argument("--model", choices=MODELS, default="bundled",
                        help="the bundled model (default), or a bert-base-sized checkpoint with random weights")
    parser.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=None,
                        help="run the same sessions one at a time on a fresh server and compare every page "
                             "(default: for the short class only)")
    args = parser.parse_args()
    if args.sessions < 1 or args.duration_s <= 0:
        parser.error("sessions must be at least 1 and duration_s above 0")
    if args.baseline is None:
        args.baseline = args.class_name == "short"
    return args


def main() -> None:
    args = arguments()
    moves_each = max(1, round(args.duration_s / PERIOD_S))
    with ExitStack() as stack:
        env, model = {}, None
        if args.model == "bert-base-random":
            print("building a bert-base-sized checkpoint with random weights", file=sys.stderr)
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="attention-anatomy-models-")))
            model = str(checkpoints.bert_base_random(scratch / "bert-base-random"))
            env = {MODEL_DIRS_ENV: model}
        if args.class_name == "long":
            class_plans, spacing_s = long_plans(args.sessions, moves_each, model), LONG_OPEN_SPACING_S
        elif args.class_name == "train":
            trainers = min(TRAINERS, args.sessions)
            class_plans = plans(args.sessions - trainers, moves_each, model=model) + training_plans(trainers)
            spacing_s = OPEN_SPACING_S
        else:
            class_plans = plans(args.sessions, moves_each, model=model)
            spacing_s = OPEN_SPACING_S
        with streamlit_server(APP, env=env) as base_url:
            pid = server_pid(port_of(base_url))
            asyncio.run(warm_up(base_url, model))
            load_average = os.getloadavg()[0]
            load = asyncio.run(run_class(base_url, pid, class_plans, open_spacing_s=spacing_s))
        serial = None
        if args.baseline:
            print("under load: done; now the same inputs one session at a time, on a fresh server", file=sys.stderr)
            with streamlit_server(APP, env=env) as base_url:
                serial = asyncio.run(run_serially(base_url, class_plans))
    report(args, class_plans, load, serial, load_average)


if __name__ == "__main__":
    main()
