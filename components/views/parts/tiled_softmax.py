"""Softmax in blocks of keys, as a GPU computes attention (FlashAttention's online softmax): one query's row of the
side column's layer and of a head picked here, taken a block of keys at a time with a running max m, a running sum
ℓ and a running output rescaled when the max grows; each block's numbers as small charts and a table, and the row it
ends with against the softmax of the whole row, their largest difference said. The block view draws it under its
steps, with the head slider its side column leaves to it.

The numbers are attention/stages/tiled_softmax.py's, through components/caches/past_attention.py.
"""

from __future__ import annotations

import streamlit as st

from components.caches import chart_memos, past_attention
from components.charts.draw import draw_spec
from components.charts.spoken_numbers import counted
from components.charts.tiled_softmax import (
    describe_blocks,
    describe_row,
    panels_spec,
    row_against_plain,
    row_frame,
    row_numbers,
    steps_frame,
)
from components.page import controls
from components.page.tables import numbers_html
from components.views.parts.own_fragment import own_fragment
from components.views.parts.scrubbed import said

QUERY_KEY, BLOCK_KEY = "tiled_query", "tiled_block"  # the section's own controls: not the link's
DEFAULT_BLOCK = 3  # keys per block on opening: a few blocks on a short text
# The steps table's columns, short enough for a phone's width: steps_frame's names -> the table's
TABLE_NAMES = {"keys": "keys", "max_after": "m", "sum_after": "ℓ", "rescale": "rescale"}
WHY = ("softmax(s)_j = exp(s_j − max s) / Σ_k exp(s_k − max s) seems to need the whole row twice: once for its max "
       "(subtracted so that exp never overflows), once for the sum. A GPU's attention kernel (FlashAttention) never "
       "holds the row whole: its fast on-chip memory holds a block of keys and values at a time, and a long text's "
       "T × T scores would not fit there. So it keeps three running numbers as the blocks go by: **m**, the largest "
       "score so far; **ℓ**, the sum of exp(s − m) so far; and **o**, the sum of exp(s − m)·v so far. When a block "
       "brings a larger max, ℓ and o were counted against the old one: multiplying them by the **rescale** "
       "exp(m_old − m_new), at most 1, makes them as if the new max had been known from the start. After the last "
       "block o / ℓ is the context row and exp(s − m) / ℓ the weights: the same numbers, to float32's rounding.")


@own_fragment(linked=True)
def render(context, layer: int) -> None:
    """The section for a head of layer `layer` as the model runs it (its own projections, √d_k, its mask), the head
    picked on its own slider (the link's head, among the model's own). A fragment of its own: its head, query and
    block size change nothing else on the page, so a move of one reruns the section alone, not the block's steps
    above it, and writes the link again."""
    tokens = list(context.encoding().tokens[0])
    count = len(tokens)
    st.subheader("Softmax in blocks of keys, as a GPU computes it")
    head = controls.model_head_slider(context.shape)
    st.markdown(f"Layer {layer}, head {head}, one query's row of scores. " + WHY)
    _fit(QUERY_KEY, count - 1, count - 1)
    _fit(BLOCK_KEY, count, min(DEFAULT_BLOCK, count))
    query_place, block_place = st.columns(2) if not context.stacked else (st.container(),) * 2
    query = query_place.selectbox("Query row", range(count), key=QUERY_KEY,
                                  format_func=lambda index: f"{index}: {tokens[index]}",
                                  help="The token whose row of scores is taken into the softmax, block by block.")
    block_size = block_place.slider("Keys per block", 1, max(2, count), key=BLOCK_KEY, disabled=count < 2,
                                    help="How many keys (and value rows) the kernel holds at once. All of them is "
                                         "the plain softmax: one block.")
    row = past_attention.tiled_row(context.model_name, context.text, context.text_b,
                                   context.settings(layer=layer, head=head, source="bert", scaling="sqrt",
                                                    mask="model"), int(query), min(int(block_size), count))
    _blocks(context, row)
    _row(context, row, tokens)


def _fit(key: str, largest: int, default: int) -> None:
    """The control's value kept within this text's range before it is drawn (a shorter text than the last)."""
    if key not in st.session_state or st.session_state[key] > largest:
        st.session_state[key] = default


def _blocks(context, row) -> None:
    st.markdown(f"Query {row.query}, {counted(len(row.steps), 'block')} of {counted(row.block_size, 'key')}:")
    # One spec for every row of blocks (built on no blocks at all), its frame sent beside it
    spec = chart_memos.chart_spec(panels_spec, "m, ℓ and the rescale after each block", max(200, context.width - 90),
                                  context.lettering)
    draw_spec(spec, {"data-0": steps_frame(row.steps)}, key="tiled_panels", lettering=context.lettering)
    said([describe_blocks(row.steps, row.query)])
    # A plain table (tables.numbers_html): the data grid hid its last columns past a phone's edge
    table = steps_frame(row.steps, drawn=False).rename(columns=TABLE_NAMES)
    st.html(numbers_html(table, "tiled-steps", formats=dict.fromkeys(("block max", *list(TABLE_NAMES.values())[1:]),
                                                                     "{:.6g}".format)))
    st.caption("A rescale below 1 is a block that brought a larger max: ℓ and o so far shrink by that factor. The "
               "first block has nothing to rescale (ℓ and o start at 0; its factor, exp(−∞ − m) = 0, is not drawn). "
               "After the last block, m is the row's max and ℓ the softmax's denominator.")


def _row(context, row, tokens: list[str]) -> None:
    draw_spec(*chart_memos.kept_token_chart(row_against_plain, row_frame,
                                            row_numbers(row.weights, row.plain_weights, row.block_size), tokens,
                                            title="The softmax of the whole row (bars) and in blocks (red ticks)",
                                            width=max(200, context.width - 90), lettering=context.lettering),
              key="tiled_row", lettering=context.lettering)
    said([describe_row(row.query, tokens[row.query], row.weights, row.plain_weights, tokens)])
    weights, values = st.columns(2)
    weights.metric("Largest |difference|, weights", f"{row.weight_difference:.1e}",
                   help="max over the keys of |tiled weight − torch.softmax of the whole row|")
    values.metric("Largest |difference|, context row", f"{row.context_difference:.1e}",
                  help="max over the head's d numbers of |o / ℓ − weights · V|")
    st.caption("Bars in two blues: every other block's keys. The tiled weights sit on the bars' tops: the "
               "differences above are float32's rounding (about 1e-7 of a weight), not an approximation.")
