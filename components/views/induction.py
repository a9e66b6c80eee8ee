"""Watch an induction head form: two tiny attention-only decoders, one layer and two, trained side by side on random
tokens that repeat, the two-layer one growing a previous-token head and an induction head, and the step it did.

The controls are the page's (page_state: periods, vocab, heads, steps, seed; in the link). Train waits for a free
place on the server and trains both models, or follows the page that trains the same settings already; a finished
run is every session's (parts/induction_training.py). A page drawn while another trains its settings watches that run,
its own Train off; a class's students, whose pages follow the teacher's settings, look for the teacher's run every
AWAIT_POLL_S until it starts, since a press of Train changes nothing the class's view holds. After it: in words which
head became what, and when; the loss and every head's scores over training; every head's attention at the kept steps,
scrubbed in the browser. The run shown is this session's last trained one, which the logit lens view can read
(parts/last_induction.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention.analyses.head_scores import INDUCTION_THRESHOLD
from attention.labs.induction import InductionConfig, InductionRun, history_rows
from attention.stages.limits import (
    PAGE_INDUCTION_HEADS,
    PAGE_INDUCTION_PERIOD,
    PAGE_INDUCTION_STEPS,
    PAGE_INDUCTION_STEPS_STEP,
    PAGE_INDUCTION_TOKENS,
    PAGE_INDUCTION_VOCAB,
    PAGE_SEED,
)
from components.caches import chart_memos, experiments, shared
from components.charts import induction as charts
from components.charts.draw import draw_spec
from components.charts.scrub import INPUT_STYLE
from components.charts.training_text import describe_induction_curves, describe_induction_maps, head_groups
from components.classroom import classroom
from components.page import controls
from components.page.downloads import csv_download
from components.views.parts import last_induction
from components.views.parts.induction_training import (
    draw_curves,
    session_run,
    status,
    train_or_watch,
    watch_under_way,
)
from components.views.parts.number_table import number_table, tables_on_request
from components.views.parts.scrubbed import said, toolbar_inside

CSV_COLUMNS = ["layers", "step", "layer", "head", "previous_token", "induction", "loss"]
WATCH_STOPPED = "_induction_watch_stopped"  # session state: the settings of a watched run its page stopped
# A student's page before training looks this often for the teacher's run of the same settings (_await_teachers_run).
AWAIT_POLL_S = 1.0
ONE_LAYER_LIMIT = 0.3  # a one-layer head above this would be doing induction by some other road: said if it happens


def render(context) -> None:
    # The Step input's style, before the chart that has it
    st.html(INPUT_STYLE)
    st.markdown(
        "Random tokens that repeat, **7 3 9 7 3 9 7 …**, with a period drawn anew for every sequence: after one "
        "period every next token can be known, by finding where the current token came before and copying what "
        "followed it. Two tiny attention-only transformers learn it side by side, with **one layer** and with "
        "**two**. Only two layers can compose a *previous-token head* (layer 0) with an *induction head* (layer 1), "
        "which looks at the token after the current token's last occurrence (Olsson et al. 2022). Layers and heads "
        "count from 0.")
    config = config_controls()
    train_column, stop_column, note_column = st.columns([1, 1, 4], vertical_alignment="center")
    run = session_run(config)
    finished = run is not None and run.finished
    watched_stopped = st.session_state.pop(WATCH_STOPPED, None) == config  # the run this page watched, last run
    # Another page trains these settings now (in a class, the teacher's): this page watches it, with no Train.
    watching = run is None and shared.induction_runs().under_way(config) is not None
    pressed = train_column.button("Train", key="induction_train", type="primary", icon=":material/play_arrow:",
                                  disabled=finished or watching,
                                  help="These settings are trained: every page shows the same run." if finished
                                  else "Another page is training these settings: this page shows its run."
                                  if watching else None)
    if watching:
        if watch_under_way(config, context.width, context.lettering) is None:
            st.session_state[WATCH_STOPPED] = config
        st.rerun()  # drawn again as every page shows a finished run, or with Train on again
    if pressed:
        stop_slot = stop_column.empty()
        stop_slot.button("Stop", key="induction_stop", icon=":material/stop:",
                         help="Stops the training where it is; what both models learned so far stays on the page.")
        run = train_or_watch(config, context.width, context.lettering) or session_run(config)
        stop_slot.empty()
        if run is not None and run.finished:
            st.rerun()  # drawn again as every page shows a finished run: Train off, the charts under their keys
    if run is None:
        note_column.caption("The page that trained these settings stopped before the end: press Train to train "
                            "them here." if watched_stopped else f"Press Train: {config.steps} steps for each model, "
                            f"batches of {config.batch_size} sequences, about 15 s with the defaults on a quiet "
                            "server.")
        if classroom.following():
            with st.container():  # a box of its own: its runs, which draw nothing, then touch nothing after it
                _await_teachers_run(config)
        _before_training(config, context)
        return
    if not pressed:
        note_column.caption(status(run))
    if finished:
        _another_seed(config, stop_column, note_column)
    _results(run, context)


@st.fragment(run_every=AWAIT_POLL_S)
def _await_teachers_run(config: InductionConfig) -> None:
    """A student's page before training: the whole page runs again as soon as a page (the teacher's) starts training
    these settings, or has trained them, so that the student watches that run. Pressing Train changes nothing the
    class's view holds, so the class's own watch does not move for it."""
    runs = shared.induction_runs()
    if runs.under_way(config) is not None or runs.finished(config) is not None:
        st.rerun(scope="app")


def _another_seed(config: InductionConfig, button_column, note_column) -> None:
    """A finished run is every page's, so Train is off for its settings: say so where Train stands, and offer the
    way to watch one form, a seed no page has trained yet (the next one; the counting restarts past the last)."""
    seed = config.seed + 1 if config.seed < PAGE_SEED.high else PAGE_SEED.low
    button_column.button("New seed", key="induction_new_seed", icon=":material/casino:", on_click=controls.request,
                         kwargs={"seed": seed}, help=f"Seed {seed}: new weights and sequences, ready to train.")
    note_column.caption("These settings are trained already, and every page shows that run (Train is off for "
                        "them). To watch the heads form, press New seed, then Train.")


def config_controls() -> InductionConfig:
    """The data's, the models' and the training's settings, in three columns; each in the page's link."""
    data, model, training = st.columns(3, gap="medium")
    with data:
        periods = controls.bound_widget(
            st.slider, "periods", "Periods (tokens before a sequence repeats)", min_value=PAGE_INDUCTION_PERIOD.low,
            max_value=PAGE_INDUCTION_PERIOD.high,
            help=f"Each sequence's period is drawn from this range. A single period would let one layer cheat: "
                 f"it would look that many tokens back by position. Sequences are {PAGE_INDUCTION_TOKENS} tokens.")
        vocab = controls.bound_widget(st.slider, "vocab", "Vocabulary (tokens)", min_value=PAGE_INDUCTION_VOCAB.low,
                                      max_value=PAGE_INDUCTION_VOCAB.high)
    with model:
        heads = controls.bound_widget(st.slider, "heads", "Heads per layer", min_value=PAGE_INDUCTION_HEADS.low,
                                      max_value=PAGE_INDUCTION_HEADS.high,
                                      help="The same in both models; each head is 16 wide.")
    with training:
        steps = controls.bound_widget(st.slider, "steps", "Training steps", min_value=PAGE_INDUCTION_STEPS.low,
                                      max_value=PAGE_INDUCTION_STEPS.high, step=PAGE_INDUCTION_STEPS_STEP)
        seed = controls.bound_widget(st.number_input, "seed", "Seed", min_value=PAGE_SEED.low,
                                     max_value=PAGE_SEED.high, step=1,
                                     help="The same seed gives the same weights, sequences and curves.")
    return InductionConfig(vocab_size=int(vocab), period_low=int(periods[0]), period_high=int(periods[1]),
                           heads=int(heads), steps=int(steps), seed=int(seed))


def _before_training(config: InductionConfig, context) -> None:
    """Both models as training will find them: every head's attention on the sequence, by chance."""
    run = experiments.untrained_induction(config)
    st.subheader("Before training")
    _maps(run, context)
    st.caption("Random weights: every head spreads its attention over the tokens before it (the causal mask hides "
               "the later ones, white above the diagonal). Press Train and watch two stripes appear in the "
               "two-layer model: one just under the diagonal in layer 0, one a period back in layer 1.")


def _results(run: InductionRun, context) -> None:
    if run.steps_run == 0:
        return
    last_induction.remember(run)  # what the logit lens reads of both models: the lens view offers them
    _in_words(run)
    one, two = run.models
    columns = st.columns(4)
    loss = "The cross-entropy of the next token where it can be known, on held-out sequences"
    best = "The best induction score of the model's heads"
    columns[0].metric("Loss, 1 layer", f"{one.repeated_loss[-1]:.2f}", help=loss)
    columns[1].metric("Loss, 2 layers", f"{two.repeated_loss[-1]:.2f}", help=loss)
    columns[2].metric("Induction, 1 layer", f"{one.induction[-1].max():.2f}", help=best)
    columns[3].metric("Induction, 2 layers", f"{two.induction[-1].max():.2f}", help=best)
    rows = history_rows(run)
    draw_curves(rows, run.config.steps, context.width, context.lettering, key="chart-induction-curves")
    said([describe_induction_curves(run.measured_steps, {"1 layer": one.repeated_loss, "2 layers": two.repeated_loss},
                                    head_groups(one.previous_token, two.previous_token),
                                    head_groups(one.induction, two.induction), INDUCTION_THRESHOLD)])
    st.caption("Loss: the cross-entropy of the next token where it can be known (a period or more in), on held-out "
               "sequences. Scores, per head, on n random tokens repeated once (n = "
               f"{run.config.probe_half}): previous-token, the mean weight on the token just before; induction, the "
               "mean weight of the second half's tokens on the token after their first occurrence.")
    _maps(run, context)
    csv_download(lambda: pd.DataFrame(rows, columns=CSV_COLUMNS).to_csv(index=False, float_format="%.9g"),
                 f"induction-{run.config.seed}")


def _in_words(run: InductionRun) -> None:
    """What happened, as sentences: which head of the two-layer model became an induction head and when, the
    previous-token head it reads, and what the one-layer model reached."""
    one, two = run.models
    inducing = [event for event in run.events() if event.layers == 2 and event.kind == "induction"]
    if inducing:
        first = inducing[0]
        st.success(f"With two layers, **{first}** (its induction score {first.score:.2f} then, "
                   f"{two.induction[-1, first.layer, first.head]:.2f} now); the loss on the repeated part went from "
                   f"{two.repeated_loss[0]:.2f} at the start to {two.repeated_loss[-1]:.2f}.", icon=":material/bolt:")
    else:
        layer, head = np.unravel_index(int(two.induction[-1].argmax()), two.induction[-1].shape)
        st.info(f"No head of the two-layer model has become an induction head yet (a score of "
                f"{INDUCTION_THRESHOLD} or more; its best: layer {layer}, head {head} at "
                f"{two.induction[-1].max():.2f}). More steps, or another seed.", icon=":material/hourglass:")
    previous = two.previous_token[:, 0]  # (M, nh): the first layer's heads
    head = int(previous[-1].argmax())
    lines = [f"Its layer 0 holds the previous-token head it reads: layer 0, head {head} puts "
             f"{previous[-1, head]:.2f} of its attention on the token just before ({previous[0, head]:.2f} before "
             "training)."]
    if len(inducing) > 1:
        lines.append("Then " + "; ".join(f"layer {e.layer}, head {e.head} at step {e.step}" for e in inducing[1:])
                     + ".")
    best_one = float(one.induction[-1].max())
    lines.append(f"One layer: no head above {best_one:.2f} as an induction head, and its loss on the repeated part "
                 f"stays at {one.repeated_loss[-1]:.2f}: one layer cannot compose two heads.")
    st.markdown(" ".join(lines[:-1]) + "\n\n" + lines[-1])
    if best_one > ONE_LAYER_LIMIT:
        st.warning(f"A head of the one-layer model scores {best_one:.2f} as an induction head: with these periods it "
                   "can find part of the answer by position alone.", icon=":material/warning:")


def _maps(run: InductionRun, context) -> None:
    """Every head's attention at every kept step, the step picked in the browser by the chart's own Step input."""
    layout = charts.maps_layout(run.config.heads, context.width, context.lettering.projected, context.height)
    one, two = run.models
    scores = (one.kept_previous_token, two.kept_previous_token, one.kept_induction, two.kept_induction)
    key = (run.config, run.steps_run, tuple(run.kept_steps.tolist()), layout)  # a run is its config's, to the step
    frames = chart_memos.chart_data_by_key(charts.maps_frames, key, one.kept, two.kept, scores, run.kept_steps, layout)
    spec = chart_memos.chart_spec(charts.maps_spec, layout, int(run.kept_steps[-1]), run.config.keep_every,
                             context.lettering)
    # The chart's Step input above it, as the one-head view's Layer and Head; its toolbar off the caption above
    st.html(toolbar_inside(described=charts.MAPS_DESCRIBED))
    draw_spec(spec, frames, key="chart-induction-maps", lettering=context.lettering)
    # Every kept step is sent and the Step input moves in the browser, with no rerun: said of the first and the last
    said([describe_induction_maps(run.kept_steps, head_groups(*scores[:2]), head_groups(*scores[2:]))])

    def tables() -> None:  # the last kept step's: the Step input moves in the browser, unheard
        probe = [f"{index}: {token}" for index, token in enumerate(run.example)]
        for layers, layer in charts.GROUPS:
            for head, matrix in enumerate((one if layers == 1 else two).kept[-1, layer]):  # (P, P) a head's
                number_table(matrix, probe, probe, caption=f"{charts.group_name(layers, layer)}, head {head}, step "
                             f"{int(run.kept_steps[-1])}", row_title="token asking", column_title="token looked at")

    tables_on_request("chart-induction-maps", tables)
    half = run.config.probe_half
    tokens = " ".join(str(token) for token in run.example[:half])
    st.caption(f"The sequence: {tokens} | {tokens} ({half} random tokens, then the same again). Rows are the tokens "
               "asking (queries), columns the tokens looked at (keys), from 0 (white) to 1 (dark blue) in every map. "
               "A previous-token head is a stripe just under the diagonal; an induction head, in the second half, a "
               f"stripe {half - 1} tokens back. Drag the Step input above the maps: the page holds every kept step.")
