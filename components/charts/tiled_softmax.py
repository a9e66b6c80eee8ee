"""Softmax in blocks of keys, as charts: each block's running max m, running sum ℓ and rescale factor as three small
panels over the blocks, and the row the blocks end with against the softmax of the whole row. Numbers in, Vega-Lite
out; the keys' tokens reach the charts as data (token_axes.label_axis reads a parameter).

Letters used in shape comments: T keys in the row, N blocks.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.chart_text import largest_cells
from components.charts.draw import spec_and_frames
from components.charts.lettering import READING, Lettering, title_lines
from components.charts.spoken_numbers import counted, figure, signed
from components.charts.token_axes import label_axis, labelled

PAD = alt.AutoSizeParams(type="pad")  # the plot as large as asked, its axes and title around it
PANEL_PX = 70  # each running quantity's panel: a strip, the three stacked
PANEL_GAP_PX = 18  # between two panels: room for the lower one's title under the upper one's axis
ROW_PX = 150
# The running quantities, as the panels' titles say them, in the order they are drawn.
QUANTITIES = {"max_after": "running max m", "sum_after": "running sum ℓ", "rescale": "rescale exp(m_old − m_new)"}
BLOCK_COLOURS = ["#6baed6", "#2171b5"]  # every other block's keys, so that the blocks show on the row
TILED_TICK = "#d62728"
RESCALES_SAID = 3  # the blocks that rescaled named in words: more would be the table, which is there for them


def steps_frame(steps, drawn: bool = True) -> pd.DataFrame:
    """The tiled softmax's steps (SoftmaxStep, N) -> a row a block: its number, its keys and every running quantity.
    drawn: the first block's rescale left out (NaN), for a chart: the core's exp(−∞ − m) = 0 multiplies the empty
    sum ℓ = 0, and drawn as a factor it would look like the largest rescale of all; a table shows the core's 0."""
    return pd.DataFrame([{"block": step.block, "keys": f"{step.keys[0]}–{step.keys[-1]}", "block max": step.block_max,
                          "max_after": step.max_after, "sum_after": step.sum_after,
                          "rescale": np.nan if drawn and step.block == 0 else step.rescale} for step in steps],
                        columns=["block", "keys", "block max", *QUANTITIES])


def running_panels(frame: pd.DataFrame, *, title: str, width: int, lettering: Lettering = READING
                   ) -> alt.TopLevelMixin:
    """m, ℓ and the rescale factor after each block (frame: steps_frame's), one small panel each on its own scale,
    blocks along x. Its spec holds nothing of the frame's rows: one spec serves every row of blocks."""
    tooltip = [alt.Tooltip("block:O"), alt.Tooltip("keys:N", title="keys (positions)"),
               alt.Tooltip("block max:Q", format=".4g")]
    panels = [alt.Chart(frame).mark_line(point=True, color=colour).encode(
        x=alt.X("block:O", title="block" if last else None, axis=alt.Axis(labelAngle=0, labels=last)),
        y=alt.Y(f"{column}:Q", title=None, axis=alt.Axis(tickCount=3, format=".3~g"), scale=alt.Scale(zero=False)),
        tooltip=[*tooltip, alt.Tooltip(f"{column}:Q", title=name, format=".6g")],
    ).properties(width=width, height=PANEL_PX, title=alt.TitleParams(name, fontSize=lettering.font_px, anchor="start"))
        for (column, name), colour, last in zip(QUANTITIES.items(), ["#1f77b4", "#ff7f0e", "#2ca02c"],
                                                [False, False, True], strict=True)]
    return alt.vconcat(*panels, spacing=PANEL_GAP_PX).properties(title=title_lines(title, width), description=title,
                                                      autosize=PAD)


def panels_spec(title: str, width: int, lettering: Lettering = READING) -> dict:
    """running_panels' spec, the same for every row of blocks (built on none): its one dataset ("data-0",
    steps_frame's) is sent beside it."""
    return spec_and_frames(running_panels(steps_frame([]), title=title, width=width, lettering=lettering))[0]


def row_numbers(weights: np.ndarray, plain_weights: np.ndarray, block_size: int) -> dict[str, np.ndarray]:
    """(T,) the tiled weights and (T,) the plain ones -> row_against_plain's numbers: both, and each key's block."""
    return {"tiled": np.asarray(weights), "plain": np.asarray(plain_weights),
            "block": np.arange(len(weights)) // block_size}


def row_frame(numbers: dict[str, np.ndarray]) -> pd.DataFrame:
    """row_numbers' numbers -> a row a key: position, block (and whether it is an odd one), both weights."""
    blocks = np.asarray(numbers["block"], dtype=int)  # (T,)
    return pd.DataFrame({"position": np.arange(len(blocks)), "block": blocks, "parity": blocks % 2,
                         "tiled": np.asarray(numbers["tiled"], dtype=float),
                         "plain": np.asarray(numbers["plain"], dtype=float)})


def row_against_plain(numbers: dict[str, np.ndarray], tokens: list[str], *, title: str, width: int,
                      lettering: Lettering = READING) -> alt.TopLevelMixin:
    """The whole row's softmax as bars (numbers: row_numbers'), every other block's keys a darker blue, and the
    tiled weights as red ticks on them: a tick off its bar's top would be a difference."""
    frame = row_frame(numbers)
    axis = label_axis(tokens, "key", len(tokens), angle=-60, length_px=width, spacing_px=lettering.label_spacing_px)
    x = alt.X("position:O", axis=axis)
    tooltip = [alt.Tooltip("position:O", title="key"), alt.Tooltip("block:O"),
               alt.Tooltip("plain:Q", title="softmax of the row", format=".6f"),
               alt.Tooltip("tiled:Q", title="in blocks", format=".6f")]
    bars = alt.Chart(frame).mark_bar().encode(
        # From 0 to the row's largest weight, found by Vega in the data: a domain written into the spec would change
        # it at every move, and Streamlit would build the chart anew instead of swapping its rows.
        x=x, y=alt.Y("plain:Q", title="weight", scale=alt.Scale(zero=True, nice=False)),
        color=alt.Color("parity:N", scale=alt.Scale(domain=[0, 1], range=BLOCK_COLOURS), legend=None),
        tooltip=tooltip)
    ticks = alt.Chart(frame).mark_tick(color=TILED_TICK, thickness=2).encode(x=x, y=alt.Y("tiled:Q"),
                                                                              tooltip=tooltip)
    chart = alt.layer(bars, ticks).properties(width=width, height=ROW_PX, title=title_lines(title, width),
                                              description=title, autosize=PAD)
    return labelled(chart, tokens)


def describe_blocks(steps, query: int) -> str:
    """running_panels in words, for a screen reader: how many blocks, where the running max ends, what the running
    sum ends at, and the blocks that brought a larger max with their rescale (the first few)."""
    rescaled = [step for step in steps[1:] if step.rescale < 1]  # the first block has nothing to rescale
    if rescaled:
        named = "; ".join(f"block {step.block} {figure(step.rescale)}" for step in rescaled[:RESCALES_SAID])
        more = "; …" if len(rescaled) > RESCALES_SAID else ""
        larger = f"{counted(len(rescaled), 'later block')} brought a larger max, rescaling ℓ: {named}{more}"
    else:
        larger = "no later block brought a larger max: nothing was rescaled"
    return (f"Query {query} in {counted(len(steps), 'block')} of {counted(len(steps[0].keys), 'key')}: the running "
            f"max m starts at {signed(steps[0].max_after)} and ends at {signed(steps[-1].max_after)}, the running sum "
            f"ℓ ends at {figure(steps[-1].sum_after)}; {larger}.")


def describe_row(query: int, token: str, weights: np.ndarray, plain_weights: np.ndarray, tokens: list[str]) -> str:
    """row_against_plain in words: the largest difference between the row in blocks and the whole row's softmax,
    and the keys of largest weight."""
    difference = float(np.abs(np.asarray(weights) - np.asarray(plain_weights)).max())  # as the page's metric says it
    largest = "; ".join(f"{tokens[key]!r} {figure(plain_weights[key])}"
                        for _, key in largest_cells(np.asarray(plain_weights)[None, :]))
    return (f"Query {query}, {token!r}: the softmax in blocks and of the whole row differ by at most "
            f"{difference:.1e} over {len(tokens)} keys. Largest weights: {largest}.")
