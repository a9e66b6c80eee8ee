"""The whole block: the side column's layer as the model runs it, step by step past the attention layer (residual
in, the norm where the family puts it, every head through W_O, the adds, the MLP), each step with its formula, its
shape and its per-token norms; what attention and the MLP write against the residual stream; and how much of each
token's update came from the other tokens once the residual and the norm are counted (Kobayashi et al. 2021).
Then, inside the attention step, one query's softmax in blocks of keys, as a GPU computes it (parts/tiled_softmax.py).
The numbers are attention/dissect/block.py's and mixing.py's, through components/caches/past_attention.py.
"""

from __future__ import annotations

import streamlit as st

from attention.dissect.block import PLACEMENT_WORDS
from components.caches import chart_memos, past_attention
from components.charts.block import (
    describe_mixing,
    describe_step,
    describe_written,
    ratio_bars,
    ratio_frame,
    step_title,
    steps_bars,
    steps_frame,
    written_bars,
    written_frame,
)
from components.charts.draw import draw_spec
from components.page import controls
from components.page.downloads import chart_downloads
from components.views.parts import tiled_softmax
from components.views.parts.number_table import number_table, tables_on_request
from components.views.parts.scrubbed import said


def render(context) -> None:
    layer = context.state.layer
    numbers = past_attention.block(context.model_name, context.text, context.text_b, layer)
    tokens = list(context.encoding().tokens[0])
    st.markdown(f"Layer {layer} of the model as it runs it: its own heads, √d_k and mask, so the side column "
                f"sets only the layer. A {context.family.label} puts its {numbers.norm_name} "
                f"{PLACEMENT_WORDS[numbers.placement].format(norm=numbers.norm_name)}.")
    st.button(f"Back to layer {layer}'s heads (One head)", key="block_to_head",
              on_click=controls.request, kwargs={"view": "head", "layer": layer}, icon=":material/arrow_back:")
    _steps(context, numbers, tokens)
    _written(context, numbers, tokens)
    _mixing(context, numbers, tokens)
    tiled_softmax.render(context, layer)


def _steps(context, numbers, tokens: list[str]) -> None:
    st.subheader("The steps, in order")
    width = max(200, context.width - 90)
    steps = zip(numbers.names, numbers.shapes, numbers.norms, numbers.formulas, strict=True)
    titles = tuple(step_title(index, name, shape, float(norms.max()), formula, width)
                   for index, (name, shape, norms, formula) in enumerate(steps))
    draw_spec(*chart_memos.kept_token_chart(steps_bars, steps_frame, numbers.norms, tokens, titles=titles,
                                            width=width, lettering=context.lettering),
              key="block_steps", lettering=context.lettering)
    said([describe_step(name, norms, tokens) for name, norms in zip(numbers.names, numbers.norms, strict=True)])
    st.caption("Each bar is a token's vector's length, ‖x_t‖, after that step, from 0 to the step's largest (in its "
               "title). Shapes are (B, T, C): batch, tokens, hidden size.")


def _written(context, numbers, tokens: list[str]) -> None:
    st.subheader(f"What each sublayer writes into the stream, layer {numbers.layer}")
    width = max(200, context.width - 90)
    options = dict(title="‖residual in‖, ‖attention‖ and ‖MLP‖ per token", width=width, lettering=context.lettering)
    draw_spec(*chart_memos.kept_token_chart(written_bars, written_frame, numbers.written, tokens, **options),
              key="chart-block-written", lettering=context.lettering)
    said([describe_written(numbers.layer, numbers.written, tokens)])
    chart_downloads(lambda: written_bars(numbers.written, tokens, **options), "block-written",
                    f"block-written-layer-{numbers.layer}", title=f"Layer {numbers.layer}: {options['title']}")
    st.caption("Grey: the residual stream a token brings in; blue: what the attention block adds to it (every head "
               "through W_O); orange: what the MLP adds. A small update beside a long stream changes the token "
               "little. " + ("For a post-norm model the MLP reads the normed stream." if numbers.placement == "post"
                             else "The stream is read before its norm."))


def _mixing(context, numbers, tokens: list[str]) -> None:
    st.subheader(f"How much of each token's update came from the others, layer {numbers.layer}")
    width = max(200, context.width - 90)
    draw_spec(*chart_memos.kept_token_chart(ratio_bars, ratio_frame, numbers.mixing_ratio, tokens,
                                            title="Mixing ratio per token", width=width, lettering=context.lettering),
              key="block_ratio", lettering=context.lettering)
    draw_spec(*chart_memos.kept_heatmap(numbers.contributions, tokens, tokens,
                                        title="‖z̃_ij‖: what token j wrote into token i", row_title="token i (updated)",
                                        column_title="token j (source)", scheme="blues", size=context.plot_px(),
                                        lettering=context.lettering), key="block_contributions",
              lettering=context.lettering)
    said(describe_mixing(numbers.layer, numbers.mixing_ratio, numbers.contributions, tokens))
    tables_on_request("block_contributions", lambda: number_table(
        numbers.contributions, tokens, tokens, caption=f"‖z̃_ij‖, layer {numbers.layer}",
        row_title="token i (updated)", column_title="token j (source)"))
    st.caption("Kobayashi et al. (2021): the attention block's output for token i is a sum over the tokens j of "
               "α_ij·(x̂_j W_V) W_O, with token i's own residual on the diagonal"
               + (" and the LayerNorm after the add linearised around it" if numbers.placement == "post" else "")
               + ". The mixing ratio is ‖Σ_{j≠i} z̃_ij‖ / (‖Σ_{j≠i} z̃_ij‖ + ‖z̃_ii‖): 0 when a token kept to itself "
               "and its residual, 1 when its update came from the others alone. The weights α alone overstate the "
               "mixing: the residual carries most of each token through.")
