"""The scaling lab: why the scores are divided by √d_k and not by d_k, measured live.

Four charts: the variance of q·k against d_k; what each scaling does to softmax for random
vectors; the same for the model's trained heads; how τ sharpens or flattens one row.
The random scores are drawn once per token count, and τ only rescales them. The random-softmax chart holds
its curves at every τ of the slider's grid and picks one with its own τ input (a point selection bound to a
range input, as the one-head view picks its head: components/charts/scrub.py), so a move of τ redraws it in
the browser; the rerun that follows brings the URL, the trained heads, the τ line and the words up to it.
The charts' specs hold no number that τ moves (τ's label sits in the data, and the legend is ordered by a
rank column), so each is built once and a rerun hands over only the data: Altair's building and schema
validation cost more than the rest of a move, and the browser swaps the numbers into the charts it drew.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from attention.stages.limits import PAGE_TEMPERATURE, PAGE_TEMPERATURE_STEP
from components.caches import chart_memos, experiments
from components.charts.draw import draw_spec
from components.charts.lab_text import (
    describe_random_softmax,
    describe_temperature,
    describe_trained_heads,
    describe_variance,
)
from components.charts.lettering import READING, Lettering
from components.charts.scaling_lab import (
    CHARTS,
    FIXED_SCALINGS,
    HEAD_SIZES,
    SCALINGS,
    SERIES,
    TAU,
    THEORY,
    softmax_chart,
)
from components.charts.scrub import INPUT_STYLE, placed
from components.page import controls
from components.page.downloads import chart_downloads
from components.page.page_state import shorten
from components.views.parts.in_place import caption_in_place
from components.views.parts.own_fragment import own_fragment
from components.views.parts.scrubbed import anchor_for, report_move, said

VARIANCE_SAMPLES = 20_000  # (q, k) pairs per d_k: the measured variance lands within about 2 % of d_k
SCORE_BUDGET = 8_192  # rows × tokens of random scores per d_k: a few hundred ms even at 512 tokens
ROW_RANGE = (64, 1_024)  # rows of random scores, whatever the text's length
TEMPERATURES = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
# Every τ the slider offers: the random-softmax chart holds them all, and its own input picks one in the browser.
TAU_GRID = tuple(round(PAGE_TEMPERATURE.low + index * PAGE_TEMPERATURE_STEP, 2) for index in
                 range(round((PAGE_TEMPERATURE.high - PAGE_TEMPERATURE.low) / PAGE_TEMPERATURE_STEP) + 1))
TAU_FIRST = 1.0  # where a kept spec's τ input starts, before `placed` moves it
# How a text alternative names each scaling (the legend's labels are symbols, read aloud badly).
SCALING_WORDS = {"none": "unscaled", "sqrt": "with √d_k", "linear": "with d_k", "temperature": "with τ = {tau:g}"}


def render(context) -> None:
    st.markdown("Attention divides the scores Q·Kᵀ by **√d_k**. Each chart below measures what happens "
                "with that choice, with no scaling, and with the tempting alternative d_k.")
    # The τ input's style, before the chart that has it
    st.html(INPUT_STYLE)
    trace = context.trace()
    tokens = len(trace.tokens[0])  # T of the current text
    temperature = context.state.temperature
    width = context.width
    _variance_section(width, context.lettering)
    _random_softmax_section(tokens, temperature, width, context.lettering)
    _trained_heads_section(context, tokens, temperature)
    _temperature_section(context, trace)


def scaling_label(scaling: str, temperature: float) -> str:
    return {"none": "none", "sqrt": "÷ √d_k", "linear": "÷ d_k", "temperature": f"÷ τ = {temperature:g}"}[scaling]


def variance_table() -> pd.DataFrame:
    """Long table: d_k, series, variance — the three scalings measured, and the theory line d_k."""
    measured = experiments.variance_by_head_size(HEAD_SIZES, FIXED_SCALINGS, VARIANCE_SAMPLES)
    frames = [pd.DataFrame({"d_k": HEAD_SIZES, "series": SERIES[s], "variance": measured[s]}) for s in FIXED_SCALINGS]
    frames.append(pd.DataFrame({"d_k": HEAD_SIZES, "series": THEORY, "variance": np.asarray(HEAD_SIZES, float)}))
    return pd.concat(frames, ignore_index=True)


def random_rows(tokens: int) -> int:
    """Rows of random scores drawn for `tokens` keys: SCORE_BUDGET cells, within ROW_RANGE."""
    return min(max(SCORE_BUDGET // tokens, ROW_RANGE[0]), ROW_RANGE[1])


def taus_sent(temperature: float) -> tuple[float, ...]:
    """The τs the random-softmax chart holds: the slider's grid, and temperature when a link asks for one off it."""
    return TAU_GRID if temperature in TAU_GRID else tuple(sorted((*TAU_GRID, temperature)))


def random_statistics(tokens: int, taus: tuple[float, ...]) -> dict[str, dict[str, np.ndarray]]:
    """{scaling: {"entropy", "max_weight": (N, H)}} of softmax over random scores of `tokens` keys at each τ of
    taus (the fixed scalings' rows the same at every τ), each computed once per token count."""
    rows = random_rows(tokens)
    fixed = experiments.random_softmax_statistics(HEAD_SIZES, tokens, rows, FIXED_SCALINGS, 1.0)
    by_tau = experiments.random_temperature_statistics(HEAD_SIZES, tokens, rows, TAU_GRID)  # (len(TAU_GRID), H) each
    if taus != TAU_GRID:  # one τ off the grid, from a link
        [extra] = set(taus) - set(TAU_GRID)
        alone = experiments.random_softmax_statistics(HEAD_SIZES, tokens, rows, ("temperature",), extra)["temperature"]
        at = taus.index(extra)
        by_tau = {name: np.insert(values, at, alone[name], axis=0) for name, values in by_tau.items()}
    shape = (len(taus), len(HEAD_SIZES))
    return {**{s: {name: np.broadcast_to(values, shape) for name, values in fixed[s].items()} for s in FIXED_SCALINGS},
            "temperature": by_tau}


def random_softmax_table(tokens: int, temperature: float = TAU_FIRST) -> pd.DataFrame:
    """Long table: temperature, d_k, scaling, rank, entropy, max_weight of softmax over random scores of `tokens`
    keys. τ's rows come at every τ the chart holds (taus_sent), and its τ input keeps one τ's; the fixed scalings'
    rows, the same at every τ, come once with no τ (a quarter of the rows of a copy per τ), kept at every τ."""
    taus = taus_sent(temperature)
    statistics = random_statistics(tokens, taus)
    sizes, measures = len(HEAD_SIZES), ("entropy", "max_weight")
    fixed = pd.DataFrame({
        TAU: np.nan,
        "d_k": np.tile(HEAD_SIZES, len(FIXED_SCALINGS)),
        "scaling": np.repeat([scaling_label(s, TAU_FIRST) for s in FIXED_SCALINGS], sizes),
        "rank": np.repeat(np.arange(len(FIXED_SCALINGS)), sizes),
        **{name: np.concatenate([statistics[s][name][0] for s in FIXED_SCALINGS]) for name in measures},
    })
    scaled = pd.DataFrame({
        TAU: np.repeat(taus, sizes),
        "d_k": np.tile(HEAD_SIZES, len(taus)),
        "scaling": np.repeat([scaling_label("temperature", tau) for tau in taus], sizes),
        "rank": SCALINGS.index("temperature"),
        **{name: statistics["temperature"][name].ravel() for name in measures},
    })
    return pd.concat([fixed, scaled], ignore_index=True)


def _random_frames(tokens: int, temperature: float) -> dict[str, pd.DataFrame]:
    return {TABLE: random_softmax_table(tokens, temperature)}


def trained_heads_table(model_name: str, text: str, text_b: str, settings, temperature: float) -> pd.DataFrame:
    """Long table: head, scaling, rank, entropy, max_weight for every trained head of settings.layer."""
    statistics = experiments.head_softmax_statistics(model_name, text, text_b, settings, SCALINGS, temperature)
    num_heads = len(statistics[SCALINGS[0]]["entropy"])
    return pd.concat([
        pd.DataFrame({"head": np.arange(num_heads), "scaling": scaling_label(s, temperature), "rank": rank,
                      **statistics[s]})
        for rank, s in enumerate(SCALINGS)
    ], ignore_index=True)


def temperature_table(scores_row: np.ndarray, tokens: list[str], temperatures: list[float],
                      labels: list[str]) -> pd.DataFrame:
    weights = experiments.temperature_row(scores_row, temperatures)  # (τs, T)
    return pd.DataFrame({
        "tau": np.repeat(temperatures, len(tokens)),
        "label": np.repeat(labels, len(tokens)),
        "position": np.tile(np.arange(len(tokens)), len(temperatures)),
        "key_token": np.tile(np.asarray(tokens, dtype=object), len(temperatures)),
        "weight": weights.ravel(),
    })


TABLE = "table"  # the name under which a chart's spec refers to its rows, handed over at drawing


def chart_spec(kind: str, *arguments) -> dict:
    """The Vega-Lite spec of CHARTS[kind](TABLE, *arguments), not validated: built once per set of arguments.

    No number that τ moves is in a spec; tests/page/test_view_lab.py checks each against the schema once.
    """
    return chart_memos.chart_spec(_spec, kind, *arguments)


def _spec(kind: str, *arguments) -> dict:
    return CHARTS[kind](alt.NamedData(name=TABLE), *arguments).to_dict(validate=False)


def draw(table: pd.DataFrame, kind: str, *arguments, key: str, lettering: Lettering = READING) -> None:
    """CHARTS[kind](table, *arguments), drawn from its kept spec, and its PNG and SVG downloads."""
    draw_spec(chart_spec(kind, *arguments), {TABLE: table}, key=key, lettering=lettering)
    chart_downloads(lambda: CHARTS[kind](table, *arguments), key, key.removeprefix("chart-"))


def _variance_section(width: int, lettering: Lettering) -> None:
    st.subheader("1 · The spread of q·k grows like d_k")
    table = variance_table()
    draw(table, "variance", width, key="chart-variance", lettering=lettering)
    at = {series: rows.set_index("d_k")["variance"] for series, rows in table.groupby("series")}
    said([describe_variance(HEAD_SIZES, {s: at[SERIES[s]].to_numpy() for s in FIXED_SCALINGS})])
    largest = HEAD_SIZES[-1]
    scaled = at[SERIES["sqrt"]]
    st.markdown(
        f"Each point is the variance of {VARIANCE_SAMPLES:,} dot products of random vectors with unit-variance "
        f"entries. Unscaled it follows the dashed theory line: {at[SERIES['none']][largest]:.1f} measured "
        f"against {largest} at d_k = {largest}. Divided by √d_k it stays between {scaled.min():.2f} and "
        f"{scaled.max():.2f} for every d_k; divided by d_k it falls as 1/d_k, to "
        f"{at[SERIES['linear']][largest]:.4f} at d_k = {largest}: √d_k is the one divisor that keeps the "
        "scores' spread the same whatever the head size."
    )


def _random_softmax_section(tokens: int, temperature: float, width: int, lettering: Lettering) -> None:
    st.subheader("2 · What each scaling does to softmax (random vectors)")
    taus, key = taus_sent(temperature), "chart-random-softmax"
    title = f"softmax over {tokens} random keys (the text's token count)"
    arguments = (False, title, tokens, width, TAU_FIRST)
    anchor = anchor_for(key, (tokens, taus, arguments, lettering), (temperature,))
    spec = placed(chart_spec("softmax", *arguments), {TAU: anchor[0]})
    frames = chart_memos.chart_data(_random_frames, tokens, TAU_FIRST if taus == TAU_GRID else temperature)
    draw_spec(spec, frames, key=key, lettering=lettering, selection_mode=[TAU],
              on_select=lambda: report_move(key, _follow_tau, (TAU,), cast=lambda tau: round(float(tau), 2)))
    chart_downloads(lambda: softmax_chart(random_softmax_table(tokens, temperature), False, title, tokens, width,
                                          temperature), key, "random-softmax")
    statistics = random_statistics(tokens, taus)
    at = taus.index(temperature)
    shown = {s: {name: values[at] for name, values in statistics[s].items()} for s in SCALINGS}  # the τ drawn
    said([describe_random_softmax(tokens, temperature, HEAD_SIZES, shown)])
    none, root, linear, fixed = shown.values()
    first, last = HEAD_SIZES[0], HEAD_SIZES[-1]
    st.markdown(
        f"Unscaled, the mean entropy falls from {none['entropy'][0]:.2f} nats at d_k = {first} to "
        f"{none['entropy'][-1]:.2f} at d_k = {last}, and the largest weight climbs to "
        f"{none['max_weight'][-1]:.2f}: wide heads collapse onto one key. "
        f"With √d_k the entropy stays between {root['entropy'].min():.2f} and {root['entropy'].max():.2f}; "
        f"with d_k it rises to {linear['entropy'][-1]:.2f}, close to the dotted uniform line "
        f"log {tokens} = {math.log(tokens):.2f}, so every key gets about the same weight. "
        + _fixed_temperature_note(temperature, fixed["entropy"][0], fixed["entropy"][-1])
    )


def _follow_tau(tau: float) -> None:
    """The reader moved the chart's τ: the URL, the trained heads, the τ line and the words follow in the rerun."""
    controls.request(temperature=tau)


def _fixed_temperature_note(temperature: float, first: float, last: float) -> str:
    if temperature == 1.0:
        return ("τ = 1 divides by nothing, so its line lies under none's: move the τ slider above the chart "
                "to try another.")
    return (f"A fixed τ = {temperature:g} does not grow with d_k, so it only delays the collapse: its entropy "
            f"still falls from {first:.2f} to {last:.2f}.")


def _trained_heads_section(context, tokens: int, temperature: float) -> None:
    state, shape = context.state, context.shape
    st.subheader(f"3 · The model's trained heads, layer {state.layer}")
    settings = context.settings(source="bert", head=min(state.head, shape.num_heads - 1))
    table = trained_heads_table(context.model_name, context.text, context.text_b, settings, temperature)
    # The layer in the heading above, not in the chart's title: a move swaps the bars into the chart drawn.
    title = f"Bars are the mean over the layer's {shape.num_heads} heads, ticks each head"
    draw(table, "softmax", True, title, tokens, context.width, key="chart-trained-heads",
         lettering=context.lettering)
    means = table.groupby("scaling", sort=False)[["entropy", "max_weight"]].mean()  # the bars, in SCALINGS' order
    said([describe_trained_heads(state.layer, shape.head_size, tokens,
                                 [SCALING_WORDS[s].format(tau=temperature) for s in SCALINGS],
                                 means["entropy"].tolist(), means["max_weight"].tolist())])
    none, root, linear = (means.loc[scaling_label(s, temperature)] for s in FIXED_SCALINGS)
    st.markdown(
        f"Here d_k = {shape.head_size} is fixed by the model, so each scaling is one number per head. Averaged "
        f"over the heads, the entropy is {none['entropy']:.2f} nats unscaled, {root['entropy']:.2f} with √d_k "
        f"(what the model was trained with) and {linear['entropy']:.2f} with d_k, against "
        f"{math.log(tokens):.2f} for a uniform row; the largest weight is {none['max_weight']:.2f}, "
        f"{root['max_weight']:.2f} and {linear['max_weight']:.2f}."
    )
    caption_in_place("Always the trained heads, whatever the projection source chosen beside this view."
                     if state.source != "bert" else None)


@own_fragment(linked=True)
def _temperature_section(context, trace) -> None:
    """Section 4, a fragment of its own: its query token changes nothing above it, so a pick reruns the section
    alone (one row's chart and its words, not the three sections above) and writes the link and the class's view
    again."""
    state = context.state
    st.subheader(f"4 · τ sharpens or flattens one row: layer {state.layer}, head {state.head}")
    tokens = list(trace.tokens[0])
    query = _query_select(tokens, context.state.query)
    root = trace.head_size**0.5
    chosen_tau = context.state.temperature if context.state.scaling == "temperature" else None
    taus = sorted({*TEMPERATURES, round(root, 2)} | ({chosen_tau} - {None}))
    labels = [f"τ = {tau:g}" + (" (√d_k)" if tau == round(root, 2) else "") +
              (" (your τ)" if tau == chosen_tau else "") for tau in taus]
    table = temperature_table(trace["scores"][0][query], tokens, taus, labels)
    title = "softmax(raw scores / τ) of the query token's row"  # which row: in the heading and the caption below
    draw(table, "temperature", tuple(tokens), title, context.width, key="chart-temperature",
         lettering=context.lettering)
    said([describe_temperature(state.layer, state.head, tokens[query], tokens, taus,
                               table["weight"].to_numpy().reshape(len(taus), len(tokens)))])  # (τs, T)
    largest = table.groupby("tau")["weight"].max()
    st.markdown(
        f"The same raw scores (d_k = {trace.head_size}) divided by different τ. At τ = {taus[0]:g} the largest "
        f"weight is {largest.iloc[0]:.2f}; at τ = {taus[-1]:g} it is {largest.iloc[-1]:.2f}, towards the "
        f"uniform 1/{len(tokens)} = {1 / len(tokens):.2f}. Dividing by √d_k is the τ = {root:.2f} line: a "
        "temperature chosen from the head size."
    )
    st.caption(f"Query token {query}: {shorten(tokens[query])}. The source, layer and head chosen beside this view "
               "apply.")


def _query_select(tokens: list[str], current: int) -> int:
    if not 0 <= current < len(tokens):
        controls.request(query=min(1, len(tokens) - 1))
    return controls.bound_widget(st.selectbox, "query", "Query token (row)", options=list(range(len(tokens))),
                                 format_func=lambda i: f"{i}: {tokens[i]}")
