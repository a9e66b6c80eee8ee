"""The counting lab: train one attention head to count letters, live, and look at what it learned.

Training runs in the script itself, with a progress bar and a curve redrawn a few times a
second. Streamlit (1.67) interrupts a running script at its next drawing call as soon as
any widget outside a fragment is used, so the Stop button needs no flag: clicking it
reruns the page, the run in progress stops at its next redraw, and the snapshot stored
just before that redraw is what the page shows. Results are kept per config in this
session only (the models are tiny, and one user's training is no one else's).

The window size is the maps' own input (components/charts/counting_maps.py): before training the chart holds the
untrained head at every window size, computed once per setting, so a move redraws the maps in the browser; the
rerun that follows (a whole page's, so that Stop still interrupts a training) brings the link, the accuracy, the
counts and the config Train uses. A trained head is its config's, one window size: its chart's input asks for the
rerun that brings the next.
"""

from __future__ import annotations

import dataclasses
import time

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from attention.labs.counting import (
    BLANK,
    PAGE_HEAD_SIZE,
    PAGE_STEPS,
    SYMBOLS,
    VOCAB_SIZE_RANGE,
    CountingConfig,
    CountingTrace,
    TrainingResult,
    equal_letters,
    letter_counts,
)
from attention.stages.limits import PAGE_SEED, PAGE_TEMPERATURE, PAGE_TEMPERATURE_STEP, PAGE_WIN_SIZE
from attention.stages.settings import SCALINGS
from components.caches import chart_memos, experiments, shared
from components.charts import counting_maps
from components.charts.counting_maps import MAPS_SPACING_PX, WIN
from components.charts.draw import draw_spec, lettered
from components.charts.heatmap import CELLS, named
from components.charts.label_stand_ins import with_label_lists
from components.charts.scrub import INPUT_STYLE, placed
from components.charts.training_text import describe_count_curves, describe_count_maps
from components.page import controls
from components.page.downloads import chart_downloads
from components.page.tables import numbers_html
from components.views.parts.number_table import number_table, tables_on_request
from components.views.parts.scrubbed import anchor_for, report_move, said, toolbar_inside

RESULTS = "count_results"  # session key: {CountingConfig: TrainingResult}, newest last
MAX_RESULTS = 8  # trained models kept per session
REDRAW_SECONDS = 0.25  # the live curve is redrawn at most this often
TARGET = 0.9  # the accuracy the defaults are tuned to pass
SCALING_LABELS = {"none": "none", "sqrt": "√d", "linear": "d", "temperature": "τ"}
LEARNING_RATES = (0.001, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2)
MAP_MIN_PX = 200  # px: a column that leaves each map less than this puts them one under the other
CHART_WIDTH = 220  # px, a curve's plot at most: two side by side fit the page's main column
CURVE_AXIS_PX = 70  # px left of a curve's plot for its axis
MAPS_KEY = "chart-count-window"
OFFERED = (PAGE_WIN_SIZE.low, PAGE_WIN_SIZE.high)  # the window sizes the maps' input offers, trained head or not
SAMPLE = "count_sample"  # session key: which example window the maps show
STAND_IN = "#"  # each letter's place in the maps' spec: a window's own letters are sent beside it
DEFAULTS = CountingConfig()


def render(context) -> None:
    # On a projector the maps come first, on the first screen: the question and the settings fold away above them
    # (at 1280x720 they took the whole first screen, and the maps began 30 px below it).
    present = context.state.present
    question = st.expander("What the head must learn", icon=":material/help:") if present else st.container()
    question.markdown(
        "A window of positions holds random letters or blanks (shown as ·); the model must say **how often "
        "each letter occurs**. It has one attention head: every letter asks the window a question (its query "
        "against each position's key), gathers the values it attends to, and a small readout turns that into "
        "a count. Nothing tells positions apart, so equal letters ask the same question. Do they learn to look "
        "at each other?"
    )
    with st.expander("Settings: letters, head size, scaling, training", icon=":material/tune:") if present \
            else st.container():
        config = config_controls(context.state.win_size)
    results = st.session_state.setdefault(RESULTS, {})
    train_column, stop_column, note_column = st.columns([1, 1, 4], vertical_alignment="center")
    trained_now = train_column.button("Train", key="count_train", type="primary", icon=":material/play_arrow:")
    if trained_now:
        stop_slot = stop_column.empty()
        stop_slot.button("Stop", key="count_stop", icon=":material/stop:",
                         help="Stops the training where it is; what it learned so far stays on the page.")
        _train_live(config, results, context)
        stop_slot.empty()
    result = results.get(config)
    if result is not None and not trained_now:  # the progress bar already says it
        note_column.caption(_status(result))
    if result is None or result.steps_run == 0:  # stopped before its first step: the head as it started
        if result is None:
            note_column.caption(f"Press Train: {config.steps} steps of {config.batch_size} fresh windows, "
                                "usually a few seconds on the CPU.")
        _before_training(config, context)
        return
    st.altair_chart(lettered(curves_chart(result, context.width), context.lettering), width="content",
                    key="chart-count-curves")
    said([describe_count_curves(result.losses, result.accuracy_steps, result.accuracies, config.steps, TARGET)])
    trace = experiments.counting_window(result, config, _sample())
    _inspection({config.win_size: trace}, config, context)


def config_controls(win_size: int) -> CountingConfig:
    """The task's and the training's settings, drawn in two rows of columns; the window size, win_size, is the
    maps' own input (its place named here)."""
    task, head, training = st.columns(3, gap="medium")
    task.caption(f"Window size W = {win_size} positions: pick it on the maps below, where they switch at once.")
    vocab_size = task.slider("Letters (vocabulary)", VOCAB_SIZE_RANGE.low, VOCAB_SIZE_RANGE.high,
                             DEFAULTS.vocab_size, key="count_vocab_size",
                             help="A, B, C, …: each position is one of them or a blank, all equally likely.")
    head_size = head.slider("Head size d", PAGE_HEAD_SIZE.low, PAGE_HEAD_SIZE.high, DEFAULTS.head_size,
                            key="count_head_size",
                            help="The width of Q, K and V. Below the number of symbols the values run out of room.")
    scaling = head.segmented_control("Scores divided by", SCALINGS, default=DEFAULTS.scaling, key="count_scaling",
                                     format_func=SCALING_LABELS.get, wrap=True) or DEFAULTS.scaling
    temperature = DEFAULTS.temperature
    if scaling == "temperature":
        temperature = head.slider("τ", PAGE_TEMPERATURE.low, PAGE_TEMPERATURE.high, 3.0, step=PAGE_TEMPERATURE_STEP,
                                  key="count_temperature")
    learning_rate = training.select_slider("Learning rate", LEARNING_RATES, DEFAULTS.learning_rate,
                                           key="count_learning_rate",
                                           help="Adam's step size, decayed to zero over the run (cosine).")
    steps = training.slider("Training steps", PAGE_STEPS.low, PAGE_STEPS.high, DEFAULTS.steps, step=20,
                            key="count_steps")
    seed = training.number_input("Seed", PAGE_SEED.low, PAGE_SEED.high, DEFAULTS.seed, step=1, key="count_seed",
                                 help="The same seed gives the same weights, windows and curve.")
    return CountingConfig(win_size=win_size, vocab_size=vocab_size, head_size=head_size, scaling=scaling,
                          temperature=float(temperature), learning_rate=float(learning_rate), steps=int(steps),
                          seed=int(seed))


def curves_chart(result: TrainingResult, width: int) -> alt.HConcatChart | alt.VConcatChart:
    """Training loss per step and held-out accuracy, on an x axis that spans the whole run: side by side in a
    column width px wide, or one under the other where two would not fit."""
    beside = width >= 2 * (CHART_WIDTH + CURVE_AXIS_PX)
    plot = CHART_WIDTH if beside else min(CHART_WIDTH * 2, width - CURVE_AXIS_PX)
    steps = np.arange(1, result.steps_run + 1)
    x = alt.X("step:Q", title="step", scale=alt.Scale(domain=[0, result.config.steps]))
    loss = alt.Chart(pd.DataFrame({"step": steps, "loss": result.losses})).mark_line(color="#c0392b").encode(
        x=x, y=alt.Y("loss:Q", title="training loss (cross-entropy)", scale=alt.Scale(zero=True)),
        tooltip=["step:Q", alt.Tooltip("loss:Q", format=".3f")],
    ).properties(title="Loss", width=plot, height=200)
    measured = pd.DataFrame({"step": result.accuracy_steps, "accuracy": result.accuracies})
    accuracy = alt.Chart(measured).mark_line(point=True, color="#1f4e9c").encode(
        x=x, y=alt.Y("accuracy:Q", title="held-out accuracy", scale=alt.Scale(domain=[0, 1]),
                     axis=alt.Axis(format="%")),
        tooltip=["step:Q", alt.Tooltip("accuracy:Q", format=".1%")],
    )
    target = alt.Chart(pd.DataFrame({"accuracy": [TARGET]})).mark_rule(strokeDash=[4, 4], color="gray").encode(
        y="accuracy:Q")
    return (alt.hconcat if beside else alt.vconcat)(
        loss,
        alt.layer(accuracy, target).properties(title="Held-out accuracy (dashed: 90 %)", width=plot,
                                               height=200),
    ).properties(autosize=alt.AutoSizeParams(type="pad", contains="padding"))


def counts_table(trace, index: int) -> pd.DataFrame:
    """One row per letter of the vocabulary: the true count, the model's, and where its attention went."""
    counts = letter_counts(trace, index)
    return pd.DataFrame({
        "letter": counts.letters,
        "true count": counts.true,
        "model's count": counts.predicted,
        "confidence": counts.confidence,
        "own-letter weight": counts.own_weight,
        "uniform share": counts.uniform_share,
    })


def _train_live(config: CountingConfig, results: dict, context) -> None:
    """Wait for a free slot on the server (saying how many are ahead), then train, redrawing the curve; a
    training still running after experiments.TRAINING_LIMIT_S stops there and says so."""
    progress = st.progress(0.0, text="Starting…")
    chart = st.empty()
    last_drawn = started = 0.0

    def on_wait(ahead: int) -> None:
        progress.progress(0.0, text=f"Waiting for a free place on the server: {ahead} training"
                                    f"{'s' if ahead != 1 else ''} ahead of yours…")

    def on_step(update) -> bool:
        nonlocal last_drawn
        if time.perf_counter() - started > experiments.TRAINING_LIMIT_S:
            return False
        if update.step < update.total and time.perf_counter() - last_drawn < REDRAW_SECONDS:
            return True
        snapshot = update.snapshot()
        _keep(results, config, snapshot)  # before drawing: a click on Stop interrupts the run inside the draw
        progress.progress(update.step / update.total, text=_status(snapshot, running=update.step < update.total))
        chart.altair_chart(lettered(curves_chart(snapshot, context.width), context.lettering), width="content")
        last_drawn = time.perf_counter()
        return True

    with shared.training_turns().turn(on_wait):
        started = time.perf_counter()
        result = experiments.train_counting(config, on_step=on_step)
    _keep(results, config, result)
    chart.empty()  # the page draws the finished curve below, under its own key
    if result.steps_run < config.steps:
        st.info(f"The training stopped after {experiments.TRAINING_LIMIT_S:.0f} s, the server's limit for one "
                f"training, at step {result.steps_run} of {config.steps}: what it learned so far is below. "
                "Fewer steps or a smaller window train within it.", icon=":material/timer:")


def _keep(results: dict, config: CountingConfig, result: TrainingResult) -> None:
    results.pop(config, None)
    results[config] = result  # newest last
    while len(results) > MAX_RESULTS:
        results.pop(next(iter(results)))


def _status(result: TrainingResult, running: bool = False) -> str:
    config = result.config
    if result.steps_run == 0:
        return "Stopped before the first step."
    first = result.steps_to(TARGET)
    reached = f" It passed 90 % at step {first}." if first else ""
    if running:
        done = f"Step {result.steps_run} of {config.steps} ({result.seconds:.1f} s)"
    elif result.finished:
        done = f"Trained {config.steps} steps in {result.seconds:.1f} s"
    else:
        done = f"Stopped at step {result.steps_run} of {config.steps} (after {result.seconds:.1f} s)"
    measured = (f"held-out accuracy {result.accuracy:.1%} (step {int(result.accuracy_steps[-1])}), "
                if len(result.accuracy_steps) else "")
    return f"{done}: {measured}training loss {result.losses[-1]:.3f}.{reached}"


def _before_training(config: CountingConfig, context) -> None:
    """The head as training will find it: its random weights' attention and counts, and its held-out accuracy."""
    accuracy = experiments.untrained_counting_accuracy(config)
    st.metric("Held-out accuracy before training", f"{accuracy:.1%}",
              help=f"Counts right out of {config.held_out} held-out windows × {config.vocab_size} letters, "
                   "with the weights training starts from.")
    _inspection(experiments.untrained_counting_windows(config, _sample()), config, context,
                "Before training: what the untrained head does")
    st.caption("Random weights: the attention is spread with no pattern to it, and the counts are guesses. "
               "Press Train and compare.")


def _sample() -> int:
    return st.session_state.get(SAMPLE, 0)


def _inspection(traces: dict[int, CountingTrace], config: CountingConfig, context,
                title: str = "What the head learned") -> None:
    """The maps of traces ({W: the head on one example window}, config's window size among them), and the
    letters table and notes of config's."""
    st.subheader(title)
    sample = _sample()
    trace = traces[config.win_size]
    # On a projector the button and the window share a line, and the note on colours waits under the maps: the
    # maps' top then stands on the first screen of a 1280x720 projector.
    present = context.state.present
    button_place, window_place = st.columns([1, 3], vertical_alignment="center") if present else (st, st)
    button_place.button("Another window", key="count_another", icon=":material/casino:",
                        on_click=lambda: st.session_state.update({SAMPLE: sample + 1}))
    window_place.markdown(f"Window: **{' '.join(trace.labels[0])}**")
    colours = ("Both maps colour a weight from 0 (white) to 1, before training and after: the same colour is the "
               "same weight, and a head that looks everywhere alike is pale.")
    if not present:
        st.caption(colours)
    _maps(traces, config, context, sample)
    if present:
        st.caption(colours)
    st.caption(_alike_note(trace))
    st.caption("The readout counts from the rows of the second map: one per symbol, asked whether or not the letter "
               "is in the window (an absent letter must answer 0). A position's row in the first map is its "
               f"letter's row there. Row {BLANK} is the blank's, which counts the blanks.")
    table = counts_table(trace, 0)
    two = "{:.2f}".format
    st.html(numbers_html(table, "count-table", bars=("confidence",),
                         formats={"confidence": "{:.0%}".format, "own-letter weight": two, "uniform share": two}))
    right = int((table["true count"] == table["model's count"]).sum())
    st.caption(f"The model gets {right} of {len(table)} counts right in this window. Own-letter weight: how much "
               "of a letter's attention lands on the positions holding it; uniform share: what it would be if the "
               "letter looked everywhere alike (its count / window size).")


def _maps(traces: dict[int, CountingTrace], config: CountingConfig, context, sample: int) -> None:
    """Both maps in one chart whose window input picks among traces' sizes, in the browser: its spec kept (it holds
    no number a move changes), its datasets too when the head is the untrained one (kept per setting)."""
    width = context.width
    beside = width >= 2 * (MAP_MIN_PX + context.lettering.label_room_px) + MAPS_SPACING_PX
    size = context.plot_px((width - MAPS_SPACING_PX) // 2 if beside else width)
    # The window's letters are data (label_stand_ins.with_label_lists): another window of the same sizes keeps the
    # spec, where its letters in the spec built the chart anew at every Another window, seed or setting
    standing = tuple((size_, (STAND_IN,) * size_) for size_ in traces)
    symbols = tuple(SYMBOLS[:config.num_symbols])
    layout = (standing, symbols, size, beside, context.lettering)
    untrained = len(traces) > 1
    shown = dataclasses.replace(config, win_size=0) if untrained else config
    anchor = anchor_for(MAPS_KEY, (untrained, shown, sample, layout), (config.win_size,))
    spec, letters = with_label_lists(placed(chart_memos.chart_spec(_maps_spec, *layout), {WIN: anchor[0]}),
                                     counting_maps.WINDOW_LETTERS,
                                     {str(size_): list(trace.labels[0]) for size_, trace in traces.items()})
    frames = (chart_memos.chart_data(_untrained_frames, shown, sample) if untrained
              else counting_maps.maps_frames(*_weights(traces))) | letters
    st.html(INPUT_STYLE + toolbar_inside(MAPS_KEY))
    draw_spec(spec, frames, key=MAPS_KEY, lettering=context.lettering, selection_mode=[WIN],
              on_select=lambda: report_move(MAPS_KEY, _follow_window, (WIN,)))
    at = traces[config.win_size]  # the size the input shows: a move reruns the page, which says the next
    said([describe_count_maps(at.labels[0], symbols, at.self_weights[0], at.symbol_weights[0])])

    def tables() -> None:
        positions = [f"{index}: {letter}" for index, letter in enumerate(at.labels[0])]
        number_table(at.self_weights[0], positions, positions, caption=f"Position × position, window size "
                     f"{config.win_size}", row_title="position asking", column_title="position looked at")
        number_table(at.symbol_weights[0], list(symbols), positions, caption=f"Each symbol's question, window size "
                     f"{config.win_size}", row_title="symbol", column_title="position looked at")

    tables_on_request(MAPS_KEY, tables)
    chart_downloads(lambda: counting_maps.maps_chart(
        *counting_maps.maps_frames(*_weights({config.win_size: at})).values(), {config.win_size: at.labels[0]},
        symbols, config.win_size, OFFERED, size, beside, DEFAULTS.win_size, context.lettering), "count-window",
        "counting-window-attention")


def _maps_spec(labels: tuple, symbols: tuple[str, ...], size: int, beside: bool, lettering) -> dict:
    first = labels[0][0]  # where the input starts, before `placed` moves it
    return counting_maps.maps_chart(named(counting_maps.WINDOW, CELLS), named(counting_maps.LETTERS, CELLS),
                                    dict(labels), symbols, first, OFFERED, size, beside, DEFAULTS.win_size,
                                    lettering).to_dict(validate=False)


def _untrained_frames(config: CountingConfig, sample: int) -> dict[str, pd.DataFrame]:
    """The untrained head's maps at every window size, for config but its window (kept: chart_memos.chart_data)."""
    return counting_maps.maps_frames(*_weights(experiments.untrained_counting_windows(config, sample)))


def _weights(traces: dict[int, CountingTrace]) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    return ({size: trace.self_weights[0] for size, trace in traces.items()},
            {size: trace.symbol_weights[0] for size, trace in traces.items()})


def _follow_window(win_size: int) -> None:
    """The reader moved the maps' window: the link, the accuracy, the counts and Train's config follow in the rerun."""
    controls.request(win_size=win_size)


def _alike_note(trace) -> str:
    alike = equal_letters(trace, 0)
    if alike is None:
        return "No letter occurs twice in this window: try another one to compare equal letters."
    rows = "are identical" if alike.spread == 0 else f"differ by at most {alike.spread:.1e}"
    return (f"Rows of equal letters {rows}: equal letters attend alike, since only the letter sets the "
            f"query. On average a repeated letter puts {alike.own:.0%} of its attention on the "
            f"positions holding it, against {alike.uniform:.0%} if it looked everywhere alike.")
