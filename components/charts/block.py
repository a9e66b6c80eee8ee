"""The block around the heads: each step's per-token norms as small bars, what each sublayer wrote against the
residual stream (grouped bars a token), and the mixing ratio a token. Numbers in, Vega-Lite out; the tokens reach
the charts as data (token_axes.label_axis reads a parameter, never a token written into an expression). The
contributions' map is heatmap.py's.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.chart_text import largest_cells
from components.charts.draw import layered
from components.charts.lettering import READING, Lettering, title_lines
from components.charts.spoken_numbers import figure
from components.charts.token_axes import label_axis, labelled, labels_name

PAD = alt.AutoSizeParams(type="pad")  # the plot as large as asked, its axes and title around it
STEP_BARS_PX = 56  # a step's bars: a strip under its name and formula
STEPS_ABOUT = "‖x_t‖ per token after each step of the block"
WRITTEN_PX = 200
PARTS_SHOWN = {"residual in": "residual in", "attention": "attention", "MLP": "MLP"}  # written()'s, as the legend
PART_COLOURS = ["#9e9e9e", "#1f77b4", "#ff7f0e"]


def _token_axis(tokens: list[str], width: int, lettering: Lettering, title: str | None = "token") -> alt.Axis:
    return label_axis(tokens, title, len(tokens), angle=-60, length_px=width, spacing_px=lettering.label_spacing_px)


def steps_bars(norms: np.ndarray, tokens: list[str], *, titles: tuple[tuple[str, ...], ...], width: int,
               lettering: Lettering = READING) -> alt.VConcatChart:
    """(S, T) each step's per-token norms ‖x_t‖ as a strip of bars, the strips one under the other in one chart (a
    chart each cost the browser about 30 ms at every move of the layer), each under its title's lines (titles[s],
    step_title's: a label list, data, so that the spec stays while the numbers it says change). Each strip from 0 to
    its step's own largest: on one scale for every step, a norm's output (a few units) flattened the attention's and
    the MLP's (hundredths, in a tiny model) to nothing. The titles say each largest, so that the steps still
    compare."""
    strips = [layered(alt.Chart().transform_filter(alt.datum.step == index).mark_bar().encode(
        x=alt.X("position:O", axis=_token_axis(tokens, width, lettering, None)),
        # the same room for every strip's numbers, so that their bars stand under each other
        y=alt.Y("norm:Q", title=None, scale=alt.Scale(zero=True), axis=alt.Axis(tickCount=2, minExtent=30)),
        tooltip=[alt.Tooltip("position:O"), alt.Tooltip("norm:Q", format=".3f")],
    ).properties(width=width, height=STEP_BARS_PX, title=alt.TitleParams(
        text=alt.ExprRef(labels_name(lines)), anchor="start", limit=0))) for index, lines in enumerate(titles)]
    chart = alt.vconcat(*strips, data=steps_frame(norms), description=STEPS_ABOUT, autosize=PAD)
    return labelled(chart, tokens, *map(list, titles))


def steps_frame(norms: np.ndarray) -> pd.DataFrame:
    """(S, T) -> steps_bars' dataset: a row per step and position."""
    steps, positions = np.indices(np.shape(norms))
    return pd.DataFrame({"step": steps.ravel(), "position": positions.ravel(),
                         "norm": np.asarray(norms, dtype=float).ravel()})


def step_title(index: int, name: str, shape: tuple[int, ...], largest: float, formula: str, width: int
               ) -> tuple[str, ...]:
    """A strip's title: the step's number, name, shape and largest norm, then its formula, each broken into lines
    no wider than the strip."""
    return (*title_lines(f"{index + 1}. {name} · shape {tuple(shape)} · largest {largest:.3g}", width),
            *title_lines(formula, width))


def ratio_frame(ratio: np.ndarray) -> pd.DataFrame:
    """(T,) -> ratio_bars' dataset: a row per position."""
    return pd.DataFrame({"position": np.arange(len(ratio)), "ratio": np.asarray(ratio, dtype=float)})


def written_frame(written: dict[str, np.ndarray]) -> pd.DataFrame:
    """{part: (T,)} -> a row per (position, part) of PARTS_SHOWN."""
    return pd.DataFrame([{"position": position, "part": PARTS_SHOWN[part], "norm": float(value)}
                         for part in PARTS_SHOWN for position, value in enumerate(written[part])],
                        columns=["position", "part", "norm"])


def written_bars(written: dict[str, np.ndarray], tokens: list[str], *, title: str, width: int,
                 lettering: Lettering = READING) -> alt.TopLevelMixin:
    """What each sublayer wrote into each token's vector beside what the stream carried in: grouped bars a token."""
    parts = list(PARTS_SHOWN.values())
    chart = alt.Chart(written_frame(written)).mark_bar().encode(
        x=alt.X("position:O", axis=_token_axis(tokens, width, lettering)),
        xOffset=alt.XOffset("part:N", sort=parts),
        y=alt.Y("norm:Q", title="norm ‖·‖"),
        color=alt.Color("part:N", sort=parts, scale=alt.Scale(domain=parts, range=PART_COLOURS), title=None,
                        legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("position:O"), alt.Tooltip("part:N"), alt.Tooltip("norm:Q", format=".3f")],
    ).properties(width=width, height=WRITTEN_PX, title=title_lines(title, width), description=title, autosize=PAD)
    return labelled(chart, tokens)


def ratio_bars(ratio: np.ndarray, tokens: list[str], *, title: str, width: int,
               lettering: Lettering = READING) -> alt.TopLevelMixin:
    """(T,) each token's mixing ratio, 0 (kept to itself and its residual) to 1 (updated by the others alone)."""
    chart = alt.Chart(ratio_frame(ratio)).mark_bar(color="#1f77b4").encode(
        x=alt.X("position:O", axis=_token_axis(tokens, width, lettering)),
        y=alt.Y("ratio:Q", title="mixing ratio", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        tooltip=[alt.Tooltip("position:O"), alt.Tooltip("ratio:Q", format=".1%", title="mixing ratio")],
    ).properties(width=width, height=WRITTEN_PX * 3 // 4, title=title_lines(title, width), description=title,
                 autosize=PAD)
    return labelled(chart, tokens)


def describe_written(layer: int, written: dict[str, np.ndarray], tokens: list[str]) -> str:
    """written_bars' chart in words, for a screen reader: the token each sublayer writes most into, with that token's
    residual stream beside it, and the longest stream brought in. written: {part: (T,)} of PARTS_SHOWN."""
    residual = np.asarray(written["residual in"], dtype=float)  # (T,)
    writes = []
    for part, name in (("attention", "attention"), ("MLP", "the MLP")):
        top = int(np.argmax(written[part]))
        writes.append(f"{name} writes most into {tokens[top]!r}, {figure(written[part][top])} against its residual's "
                      f"{figure(residual[top])}")
    longest = int(np.argmax(residual))
    return (f"Layer {layer}, what each sublayer writes into {len(tokens)} tokens (‖·‖): {'; '.join(writes)}. The "
            f"longest residual brought in: {tokens[longest]!r}, {figure(residual[longest])}.")


def describe_mixing(layer: int, ratio: np.ndarray, contributions: np.ndarray, tokens: list[str]) -> list[str]:
    """ratio_bars' chart and the contributions' map in words, for a screen reader: the tokens of highest and lowest
    mixing ratio; the largest ‖z̃_ij‖ from another token (the diagonal, a token's own with its residual, dwarfs them
    and is said apart). ratio (T,), contributions (T, T): row i the token updated, column j the source."""
    high, low = int(np.argmax(ratio)), int(np.argmin(ratio))
    mixed = (f"Mixing ratio per token, layer {layer}: highest {tokens[high]!r} {figure(ratio[high])}, lowest "
             f"{tokens[low]!r} {figure(ratio[low])}, mean {figure(float(np.mean(ratio)))}.")
    others = np.where(np.eye(len(tokens), dtype=bool), np.nan, contributions)  # (T, T), the diagonal left out
    cells = "; ".join(f"{tokens[row]!r} ← {tokens[column]!r} {figure(contributions[row, column])}"
                      for row, column in largest_cells(others))
    own = int(np.argmax(np.diag(contributions)))
    written = (f"What token j wrote into token i, layer {layer}, {len(tokens)} tokens (‖z̃_ij‖). Largest from another "
               f"token: {cells or 'none'}. Largest of a token's own, with its residual: {tokens[own]!r} "
               f"{figure(contributions[own, own])}.")
    return [mixed, written]


def describe_step(name: str, norms: np.ndarray, tokens: list[str]) -> str:
    """A strip of steps_bars' chart in words, for a screen reader: the tokens of longest and shortest vector after
    the step."""
    longest, shortest = int(np.argmax(norms)), int(np.argmin(norms))
    return (f"‖{name}‖ per token: longest {tokens[longest]!r} {figure(norms[longest])}, shortest "
            f"{tokens[shortest]!r} {figure(norms[shortest])}.")
