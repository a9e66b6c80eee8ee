"""The induction lab's Train: wait for a free place, train both models while drawing their curves, or watch the run
another page is training for the same settings; a finished run goes to every session (shared.induction_runs).

Training runs in the script itself, as the counting lab's does. Streamlit (1.67) interrupts a running script at
its next drawing call as soon as a widget is used, so Stop needs no flag: the click reruns the page, the run stops
at its next redraw, and the snapshot kept just before that redraw is what the page shows. A run that ends
unfinished stays in this session only; another press trains these settings anew. A page that watches sends its
progress bar at every poll, so that a closed tab's watch ends within one (see _watch), and the trainer's bar says
how many pages follow its run.
"""

from __future__ import annotations

import contextlib
import time

import streamlit as st

from attention.labs.induction import InductionConfig, InductionRun, history_rows
from components.caches import chart_memos, experiments, shared
from components.charts.draw import draw_spec
from components.charts.induction import curves_frames, curves_spec
from components.server.shared_runs import Live

STOPPED = "induction_stopped"  # session key: {InductionConfig: InductionRun} runs of this session that ended unfinished
MAX_STOPPED = 4
REDRAW_SECONDS = 1.0  # the live curves are redrawn at most this often: each redraw takes the training's thread
WATCH_POLL_S = 0.5  # a watcher reads the trainer's run this often, and sends its bar: see _watch


def session_run(config: InductionConfig) -> InductionRun | None:
    """The run of these settings this page can show: the server's finished one, else this session's unfinished."""
    return shared.induction_runs().finished(config) or st.session_state.get(STOPPED, {}).get(config)


def train_or_watch(config: InductionConfig, width: int, lettering) -> InductionRun | None:
    """Train these settings, or watch the page that trains them already; the run as it ended (None: the watched
    run was stopped by its page, and nothing was trained here)."""
    progress = st.progress(0.0, text="Starting…")
    live_chart, events = st.empty(), st.empty()
    with shared.induction_runs().train(config) as live:
        if live is None:
            return _watch(config, progress, live_chart, width, lettering)
        run, limited = _train(config, live, progress, live_chart, events, width, lettering)
        if run.finished:
            shared.induction_runs().keep_finished(config, run)
            st.session_state.get(STOPPED, {}).pop(config, None)
    live_chart.empty()  # the page draws the finished curves below, under their own key
    events.empty()
    if limited:
        st.info(f"The training stopped after {experiments.TRAINING_LIMIT_S:.0f} s, the server's limit for one "
                f"training, at step {run.steps_run} of {config.steps}: what both models learned so far is below. "
                "Fewer steps or fewer heads train within it.", icon=":material/timer:")
    return run


def watch_under_way(config: InductionConfig, width: int, lettering) -> InductionRun | None:
    """Watch the run another page is training for these settings (a class's students, their teacher's), never
    training here: its finished run, else None (it was stopped, or ended before the watch began)."""
    progress = st.progress(0.0, text="Starting…")
    live_chart = st.empty()
    return _watch(config, progress, live_chart, width, lettering)


def status(run: InductionRun, running: bool = False) -> str:
    """One line: how far the run is and what each model's loss on the repeated part is."""
    config = run.config
    if running:
        done = f"Step {run.steps_run} of {config.steps} ({run.seconds:.1f} s)"
    elif run.finished:
        done = f"Trained {config.steps} steps in {run.seconds:.1f} s"
    else:
        done = f"Stopped at step {run.steps_run} of {config.steps} (after {run.seconds:.1f} s)"
    one, two = run.models
    return (f"{done}: loss on the repeated part {one.repeated_loss[-1]:.2f} with one layer, "
            f"{two.repeated_loss[-1]:.2f} with two (step {int(run.measured_steps[-1])}).")


def _train(config: InductionConfig, live: Live, progress, chart, events, width: int, lettering
           ) -> tuple[InductionRun, bool]:
    """Wait for a free place, then train, publishing to live and redrawing; the run, and whether the server's
    time limit stopped it."""
    stopped = st.session_state.setdefault(STOPPED, {})

    def on_wait(ahead: int) -> None:
        live.note = (f"Waiting for a free place on the server: {ahead} training{'s' if ahead != 1 else ''} ahead "
                     "of this one…")
        progress.progress(0.0, text=_trainer_note(live))

    last_drawn = 0.0
    with shared.training_turns().turn(on_wait):
        started = time.perf_counter()
        with contextlib.closing(experiments.induction_training(config)) as steps:
            for update in steps:
                if time.perf_counter() - started > experiments.TRAINING_LIMIT_S:
                    run = update.finish()
                    _keep(stopped, config, run)
                    return run, True
                if update.step < update.total and time.perf_counter() - last_drawn < REDRAW_SECONDS:
                    continue
                run = update.snapshot()
                # Kept before drawing: a click on Stop interrupts the run inside the draw.
                _keep(stopped, config, run)
                live.latest, live.fraction = run, update.step / update.total
                live.note = status(run, running=update.step < update.total)
                _draw(run, live, progress, chart, width, lettering, events)
                last_drawn = time.perf_counter()
    return run, False


def _watch(config: InductionConfig, progress, chart, width: int, lettering) -> InductionRun | None:
    """Follow the run another page is training for these settings until it ends; its finished run, if it finished."""
    runs = shared.induction_runs()
    with runs.watch(config) as live:
        shown = None
        while live is not None and not live.ended:
            # The bar at every poll, changed or not: the page shows the trainer's note as it changes (its place in
            # the line too), and Streamlit stops the run of a session that has gone only at a call that sends to
            # it, so a closed tab ends here within a poll, not at the trainer's next step or its end.
            progress.progress(live.fraction, text=f"Another page is training these settings; this page follows it. "
                                                  f"{live.note}")
            if live.latest is not shown:
                shown = live.latest
                with chart:
                    draw_curves(history_rows(shown), config.steps, width, lettering)
            time.sleep(WATCH_POLL_S)
    chart.empty()
    finished = runs.finished(config)
    if finished is None:
        progress.progress(0.0, text="The page that trained these settings stopped before the end: press Train to "
                                    "train them here.")
    return finished


def _trainer_note(live: Live) -> str:
    """What the trainer's progress bar says: its note, and how many other pages follow the run, if any."""
    followers = live.watchers
    if not followers:
        return live.note
    return f"{live.note} {followers} other page{'s follow' if followers != 1 else ' follows'} this run."


def _draw(run: InductionRun, live: Live, progress, chart, width: int, lettering, events) -> None:
    progress.progress(live.fraction, text=_trainer_note(live))
    with chart:
        draw_curves(history_rows(run), run.config.steps, width, lettering)
    formed = [str(event) for event in run.events() if event.layers == 2]
    if formed:
        events.markdown("With two layers: " + "; ".join(formed) + ".")


def draw_curves(rows: dict, total_steps: int, width: int, lettering, key: str | None = None) -> None:
    """The loss and the heads' scores over training: one spec per run length and width, its data swapped in."""
    spec = chart_memos.chart_spec(curves_spec, total_steps, width, lettering)
    draw_spec(spec, curves_frames(rows), key=key, lettering=lettering)


def _keep(stopped: dict, config: InductionConfig, run: InductionRun) -> None:
    stopped.pop(config, None)
    stopped[config] = run  # newest last
    while len(stopped) > MAX_STOPPED:
        stopped.pop(next(iter(stopped)))
