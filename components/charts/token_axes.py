"""Axes of tokens: a tick per token (or every few), each reading its label from a parameter the chart carries, a
sentence pair's B in orange, and the cells' bands along them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import altair as alt
import numpy as np

from components.charts.lettering import READING

LABEL_LIMIT_PX = 90  # px: an axis label longer than this is cut (label_axis)

# The cells' bands along an axis of tokens. Vega leaves out an axis value its scale puts at 0 px when the axis
# lists its values (every other token, on a small heatmap): the first token, [CLS], the darkest row and column,
# lost its label. A thousandth of a band's padding before the first keeps every cell where it was.
TOKEN_BANDS = alt.Scale(paddingOuter=0.001)


SENTENCE_B_COLOUR = "#b35806"  # a sentence pair's B on the axes: orange, apart from both colour schemes


LABEL_COLOUR = READING.label_colour  # where an axis colours its own labels (sentence B in orange): A in this


def label_axis(labels: list[str], title: str, count: int, angle: int, length_px: float | None = None,
               spacing_px: int = READING.label_spacing_px, second_from: int | None = None,
               keep: tuple[int, ...] = ()) -> alt.Axis:
    """An axis whose tick at index i reads labels[i]; at most ~40 ticks on long texts, and no closer than
    spacing_px when the axis is length_px long (a small heatmap labels every other token or fewer).
    The axis reads its labels from a parameter that the chart must carry: labelled(chart, labels).
    second_from: the index of a sentence pair's first token of sentence B, whose labels from there on are
    in SENTENCE_B_COLOUR and bold, as the title then says (None: no B on this axis).
    keep: indices labelled whatever the step (the query picked), their neighbours closer than a step left out."""
    step = label_step(count, length_px, spacing_px)
    values = [value for value in range(0, count, step) if all(abs(value - index) >= step for index in keep)]
    values = sorted({*values, *(index for index in keep if 0 <= index < count)})
    marks = {}
    if second_from is not None:
        in_b = f"floor(datum.value) >= {int(second_from)}"
        title = f"{title} ({'all ' if second_from == 0 else ''}sentence B in orange)"
        marks = {"labelColor": alt.ExprRef(f"{in_b} ? '{SENTENCE_B_COLOUR}' : '{LABEL_COLOUR}'"),
                 "labelFontWeight": alt.ExprRef(f"{in_b} ? 'bold' : 'normal'")}
    return alt.Axis(
        title=title,
        values=values,
        labelExpr=f"{labels_name(labels)}[floor(datum.value)]",
        labelAngle=angle,
        labelOverlap=False,
        labelFlush=False,  # Streamlit's theme pushes the first and last labels inward, onto their neighbours
        labelLimit=LABEL_LIMIT_PX,
        **marks,
    )


def label_step(count: int, length_px: float | None = None, spacing_px: int = READING.label_spacing_px) -> int:
    """Every how many tokens an axis of count tokens, length_px long, writes a label: at most ~40 labels, and no
    closer than spacing_px."""
    step = max(1, int(np.ceil(count / 40)))
    if length_px:
        step = max(step, int(np.ceil(count * spacing_px / length_px)))
    return step


def kept_where_skipped(keep: tuple[int, ...], count: int, length_px: float | None = None,
                       spacing_px: int = READING.label_spacing_px) -> tuple[int, ...]:
    """The labels label_axis must keep (keep=) where it skips some, else none: an axis that labels every token
    draws the same whatever keep held, so that a chart's spec need not change with it."""
    return keep if label_step(count, length_px, spacing_px) > 1 else ()


def token_labels(labels: list[str]) -> alt.Parameter:
    """The labels of an axis as a parameter: data, which Vega never parses. Written into the axis's expression,
    a token such as "if" stopped Vega's parser ("Unrecognized signal name") and the chart was not drawn."""
    return alt.param(name=labels_name(labels), value=list(labels))


def labels_name(labels: Sequence[str]) -> str:
    """The name of token_labels' parameter, by its contents, so that two charts side by side with the same tokens
    share one parameter. An expression needs only the name: building Altair's parameter took 3 ms."""
    return f"labels_{hashlib.blake2b(json.dumps(list(labels)).encode(), digest_size=6).hexdigest()}"


def labelled(chart: alt.TopLevelMixin, *label_lists: list[str]) -> alt.TopLevelMixin:
    """The chart carrying the parameters its label_axis axes read their labels from."""
    params = {param.name: param for param in map(token_labels, label_lists)}
    return chart.add_params(*params.values())


def second_sentence_from(segments: list[int]) -> int | None:
    """The index of the first token of sentence B (segment id 1) among the tokens of an axis, in their order;
    None when none of them is B's."""
    return next((index for index, segment in enumerate(segments) if segment == 1), None)


def centred(axis: alt.Axis) -> alt.Axis:
    """The same axis on a continuous scale: ticks in the middle of each cell."""
    return alt.Axis(**{**axis.to_dict(), "values": [v + 0.5 for v in axis.values]})
