"""The guided lesson's step "What a head moves": the weights, then what they move (Kobayashi et al. 2020), and
the sinks that take much weight and move little (Clark et al. 2019's [SEP]), on the student's own text."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention.analyses.lesson import sink_shares
from attention.dissect.value_norms import moved
from components.caches import moves, stacks
from components.page.page_state import shorten
from components.views.parts.lesson_kit import (
    explain,
    formula,
    heatmap_in,
    pair_starts,
    points,
    shapes_table,
    trained,
    two_heatmaps,
)

# What the papers found, a point each.
PAPERS = ("Clark et al. (2019) found that bert-base's heads in its middle layers put over half of their attention on "
          "[SEP], and that the attention barely changes what they compute: a head with nothing to look for parks its "
          "weight there, a no-op.",
          "Kobayashi et al. (2020) measured what the weights move, α·‖f(x)‖, and the heavy weights on [CLS], [SEP] "
          "and punctuation moved little.")


def moves_step(context) -> None:
    trace, head = trained(context)
    tokens = list(trace.tokens[0])
    formula(context, r"\mathrm{head}_i = \sum_j \alpha_{ij}\, f(x_j),",
            r"f(x_j) = (x_j W_V + b_V)\, W_O^{h}", between=r"\quad")
    st.caption("f(x_j) is what key j offers the head: its value vector taken through the head's columns of the "
               "output projection W_O. A large weight on a key whose f is short moves little.")
    settings = context.settings(source="bert", head=head)
    norms = moves.layer_value_norms(context.model_name, context.text, context.text_b, settings)  # (nh, T)
    weights = trace["weights"][0]  # (T, T)
    amounts = moved(weights, norms[head])  # (T, T): α_ij·‖f(x_j)‖
    left, right, width = two_heatmaps(context, len(tokens))
    with left:
        heatmap_in(context, weights, tokens, tokens, "Weights α", "moves-weights", where=f"head {head}",
                   second_sentence=pair_starts(trace), width=width)
    with right:
        heatmap_in(context, amounts, tokens, tokens, "What moves α·‖f(x)‖", "moves-amounts", where=f"head {head}",
                   second_sentence=pair_starts(trace), width=width, download=True)
    heatmap_in(context, norms[head][None], ["‖f(x_j)‖"], tokens, "What each key offers, ‖f(x_j)‖",
               "moves-norms", where=f"head {head}", row_title="", second_sentence=(None, pair_starts(trace)[1]))
    shapes_table(trace, ["V", "weights"])
    # In short parts a learner reads one at a time: what a key offers, each sink, the layer's verdict, the papers.
    offered, *sinks = _sentences(context, trace, head, weights, amounts, norms)
    explain(offered)
    points(*sinks)
    st.markdown("What the papers found:")
    points(*PAPERS)


def _sentences(context, trace, head: int, weights: np.ndarray, amounts: np.ndarray, norms: np.ndarray) -> list[str]:
    """What the weights and what they move say here, every number computed: what the keys offer, then what each
    sink takes and, for the layer, what its heaviest sink moves."""
    tokens, layer = trace.tokens[0], context.state.layer
    offered = norms[head]  # (T,)
    longest, shortest = int(offered.argmax()), int(offered.argmin())
    sentences = [f"In head {head}, ‖f(x_j)‖ runs from {offered[shortest]:.3g} ({shorten(tokens[shortest])}) to "
                 f"{offered[longest]:.3g} ({shorten(tokens[longest])}): a key's weight says how much a query looks "
                 "at it, its ‖f‖ how much that look can bring."]
    sinks = context.encoding().sinks[0]  # (T,)
    head_shares = sink_shares(weights[None], amounts[None], tokens, sinks)
    every_head = stacks.HeadStack(context.model_name, context.text, context.text_b,
                           context.settings(source="bert", layer=0, head=0), "weights", (layer,),
                           tuple(range(len(norms)))).values()[0]  # (nh, T, T)
    layer_shares = sink_shares(every_head, moved(every_head, norms), tokens, sinks)
    for here, whole in zip(head_shares, layer_shares, strict=True):
        sentences.append(f"This head puts {here.weight:.0%} of its weight on {shorten(here.token)} and takes "
                         f"{here.moved:.0%} of what it moves from it; the {len(norms)} heads of layer {layer} "
                         f"together: {whole.weight:.0%} of their weight, {whole.moved:.0%} of what they move.")
    if layer_shares:
        parked = max(layer_shares, key=lambda share: share.weight)
        verdict = ("moves far less than it is weighted: much of that weight is parked" if parked.moved < parked.weight
                   / 2 else "moves about as much as it is weighted here")
        sentences.append(f"In this layer, on this text, the heads weigh {shorten(parked.token)} most of the sinks "
                         f"({parked.weight:.0%}), and it {verdict}.")
    return sentences

