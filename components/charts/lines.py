"""The bertviz picture of one head: two columns of tokens, a line from each query to each key.

A line's opacity is its weight; pointing at a token keeps its own lines and dims the rest (on the
left, where that token looks; on the right, who looks at it). Like the heatmap, every head of the
text is sent once and the layer and head are picked on the chart, in the browser
(components/charts/scrub.py). Lines below LINE_THRESHOLD are not sent: they would be drawn at less than
1 % opacity, and leaving them out keeps a 128-token head to a few thousand lines.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.charts.heatmap import HEAD, LAYER, filter_on
from components.charts.scrub import selections

LINE_THRESHOLD = 0.01
LINES, TOKENS = "lines", "tokens"  # the datasets
WIDTH = 260  # px between the two columns of tokens, at most
TOKEN_PX = 90  # px a column of tokens takes beside the lines
ROW_PX = (9, 20)  # a token's row height: the smallest (long texts) and the largest (short ones)
LARGEST_FONT_PX = 14  # a token's text, on a short text
DIMMED = 0.03  # the opacity of the lines of tokens not pointed at
# Tokens a column shows at most: a longer text (512 tokens drew a chart 5,100 px tall, its tokens at 7 px) is shown
# a window of this many queries and as many keys, which the reader moves (window).
LINES_MOST = 64


def window(count: int, start: int) -> range:
    """The LINES_MOST positions of count from start (all of them, for a short text), within the text."""
    start = max(0, min(start, count - LINES_MOST))
    return range(start, min(count, start + LINES_MOST))


def lines_frames(values: np.ndarray, layers: tuple[int, ...], heads: tuple[int, ...], first_query: int = 0,
                 last_query: int | None = None, first_key: int = 0, last_key: int | None = None
                 ) -> dict[str, pd.DataFrame]:
    """One row per line drawn from the weights values (nl, h, T, T) of the given layers' heads: layer, head,
    query q, key k and the weight w, for every weight ≥ LINE_THRESHOLD of the queries and keys from first to last
    (excluded), counted from the first of each."""
    weights = values[:, :, first_query:last_query, first_key:last_key]  # (nl, h, R, K)
    layer_index, head_index, query, key = np.nonzero(weights >= LINE_THRESHOLD)  # each (N,)
    return {LINES: pd.DataFrame({
        LAYER: np.asarray(layers, dtype=np.uint8)[layer_index],
        HEAD: np.asarray(heads, dtype=np.uint16)[head_index],
        "q": query.astype(np.uint16),
        "k": key.astype(np.uint16),
        "w": weights[layer_index, head_index, query, key].astype(np.float32),
    })}


def spec(title: str, rows: int, shape: tuple[int, int], many_layers: bool, many_heads: bool, width: int,
          smallest_font_px: float) -> dict:
    """Lines between a column of query tokens (left) and of key tokens (right), filtered to the picked head;
    the tokens written no smaller than smallest_font_px."""
    layer, head, picks = selections(shape, many_layers, many_heads)
    row = float(np.clip(900 / rows, max(ROW_PX[0], smallest_font_px + 1), max(ROW_PX[1], smallest_font_px + 1)))
    font = float(np.clip(row - 1, smallest_font_px, max(LARGEST_FONT_PX, smallest_font_px)))
    y = alt.Scale(domain=[-0.5, rows - 0.5], reverse=True, nice=False, zero=False)
    x = alt.Scale(domain=[0, 1], nice=False, zero=False)
    # Each listens to its own column only: a point selection takes the datum of whatever mark is under the
    # pointer, and a query token has no key field to give.
    pointed_query = alt.selection_point(name="pointed_query", fields=["q"], on="@query_tokens_marks:pointerover",
                                        clear="pointerout")
    pointed_key = alt.selection_point(name="pointed_key", fields=["k"], on="@key_tokens_marks:pointerover",
                                      clear="pointerout")

    # Every move makes a head's lines anew, up to 1,500 of them at 128 tokens: each property a line is given is
    # worked out per line, by Vega's expression interpreter. So the lines are given only what they show: their
    # ends in pixels (no field, no formula) and no ARIA description (a canvas draws none; it cost 8 number
    # formats a line).
    lines = alt.Chart(alt.NamedData(name=LINES)).mark_rule(strokeWidth=2, color="#1f4e9c", aria=False)
    for pick in picks:
        lines = lines.transform_filter(filter_on(pick))
    lines = lines.add_params(head, layer).encode(  # Vega lists the inputs last first: Layer leads
        x=alt.value(0), x2=alt.value(width),
        y=alt.Y("q:Q", scale=y, axis=None), y2="k:Q",
        strokeOpacity=alt.condition(pointed_query & pointed_key,
                                    alt.StrokeOpacity("w:Q", scale=alt.Scale(domain=[0, 1], range=[0, 1]),
                                                      legend=None),
                                    alt.value(DIMMED)),
        tooltip=[alt.Tooltip("q:Q", title="query"), alt.Tooltip("k:Q", title="key"),
                 alt.Tooltip("w:Q", title="weight", format=".4f")],
    )

    def column(side: str, at: int, align: str, offset: int, pointed: alt.Parameter) -> alt.Chart:
        name = "query_tokens" if side == "q" else "key_tokens"  # its marks are <name>_marks
        tokens = alt.Chart(alt.NamedData(name=TOKENS), name=name).transform_filter(alt.datum.side == side)
        return tokens.transform_calculate(**{side: "datum.position", "x": str(at)}).mark_text(
            align=align, dx=offset, fontSize=font, cursor="pointer", tooltip=False,
        ).encode(
            x=alt.X("x:Q", scale=x, axis=None), y=alt.Y(f"{side}:Q", scale=y, axis=None), text="token:N",
            color=alt.condition(pointed, alt.value("#c0392b"), alt.value("#10151c"), empty=False),
        ).add_params(pointed)

    chart = alt.layer(lines, column("q", 0, "right", -8, pointed_query), column("k", 1, "left", 8, pointed_key))
    return chart.properties(title=title, description=title, width=width, height=round(row * rows),
                            autosize=alt.AutoSizeParams(type="pad"),
                            usermeta={"embedOptions": {"renderer": "canvas"}}).to_dict(validate=False)
