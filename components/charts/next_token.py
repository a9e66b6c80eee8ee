"""The guided lesson's last step: the model's top guesses of the token after the text as bars, and its final guess's
probability at every layer read as a line. Numbers in, Vega-Lite out; the guessed tokens reach the chart as data
(token_axes.label_axis reads them from a parameter, never from an expression).
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.lettering import READING, Lettering, title_lines
from components.charts.token_axes import label_axis, labelled

BAR_PX = 28  # a guess's row
LINE_PX = 160
PAD = alt.AutoSizeParams(type="pad")  # the plot as large as asked, its axes and title around it (not inside it)


def guess_bars(tokens: list[str], probabilities: np.ndarray, *, title: str, width: int,
               lettering: Lettering = READING) -> alt.TopLevelMixin:
    """(k,) the top guesses' probabilities, most probable first, as bars from 0 a row each: to the largest, not to
    1, so that an untrained model's guesses of a few thousandths still show their order."""
    frame = pd.DataFrame({"rank": np.arange(len(tokens)), "probability": np.asarray(probabilities, dtype=float)})
    chart = alt.Chart(frame).mark_bar().encode(
        y=alt.Y("rank:O", axis=label_axis(tokens, "next token", len(tokens), angle=0,
                                          spacing_px=lettering.label_spacing_px)),
        x=alt.X("probability:Q", title="probability", scale=alt.Scale(zero=True), axis=alt.Axis(format="%")),
        tooltip=[alt.Tooltip("rank:O"), alt.Tooltip("probability:Q", format=".4f")],
    ).properties(width=width, height=BAR_PX * len(tokens), title=title_lines(title, width), description=title,
                 autosize=PAD)
    return labelled(chart, tokens)


def layer_line(probabilities: np.ndarray, *, title: str, width: int) -> alt.Chart:
    """(L + 1,) the final guess's probability read before each layer (0: the embeddings; the last: the model's
    output) as a line from 0 to its largest."""
    frame = pd.DataFrame({"layer": np.arange(len(probabilities)), "probability": np.asarray(probabilities,
                                                                                             dtype=float)})
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("layer:O", title="read before layer (last: the output)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("probability:Q", title="P(final guess)", scale=alt.Scale(zero=True), axis=alt.Axis(format="%")),
        tooltip=[alt.Tooltip("layer:O"), alt.Tooltip("probability:Q", format=".4f")],
    ).properties(width=width, height=LINE_PX, title=title_lines(title, width), description=title, autosize=PAD)
