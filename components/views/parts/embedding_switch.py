"""The switch view for a model without the masked-language-model head: the sentence embedding's own job.

all-MiniLM-L6-v2 turns a sentence into one vector (the mean of its last hidden states, length 1); two
sentences are as alike as the cosine of their vectors. Switching heads off moves sentence A's vector and
changes that cosine. A is the sidebar's text, B its second sentence or, when none is typed, a default that
the view names. Both are shown as the model reads them (token chips, escaped), never as markdown.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import streamlit as st

from attention.experiments.embedding_switch import DEFAULT_SECOND, moved_grid
from components.caches import chart_memos, experiments, models
from components.charts.draw import draw_spec, lettered, spec_and_frames
from components.charts.heatmap import heatmap, heatmap_frames
from components.charts.switch_text import describe_embedding, describe_head_grid
from components.page.downloads import chart_downloads
from components.page.page_state import MAX_TEXT_CHARS
from components.page.tables import metric_html, numbers_html
from components.page.tokens import token_chips
from components.server.switch_asks import ASKS
from components.views.parts.head_toggles import (
    head_toggles,
    heads_off_asked,
    heads_off_label,
    heads_off_now,
    set_heads_off,
)
from components.views.parts.number_table import number_table, tables_on_request
from components.views.parts.own_fragment import own_fragment
from components.views.parts.scrubbed import said

RANKED = 10  # heads listed in the ranking table
TOP_HEADS = 3  # heads the "switch off the strongest" button silences
RANKING_SHARE = 0.4  # of the view's width for the ranking's heatmap; its table beside it takes the rest
LARGE_GAP_PX = 51  # st.columns(gap="large"): 3rem at the theme's 17-px font
SPECIAL = ("[CLS]", "[SEP]", "[PAD]")
MOVEMENT_SCHEME = "redblue"  # signed: the difference row is as often below 0 as above
MOVEMENT_ROWS = ("all on", "heads off", "off − on")  # short: row labels longer than 90 px push a phone's chart out


def render(context, shape) -> None:
    name = context.model_name
    st.markdown(
        f"{name} was trained to turn a sentence into **one vector**, the mean of its tokens' last hidden "
        "states scaled to length 1 (as sentence-transformers does); two sentences are as alike as the "
        "cosine of their vectors. Switch heads off (their context is set to zero before the layer's output "
        "projection) and watch sentence A's vector move and the similarity of A and B change."
    )
    second = context.text_b.strip() or DEFAULT_SECOND
    try:
        intact, effects = experiments.embedding_ranking(name, context.text, second)
    except ValueError as error:
        st.warning(str(error), icon=":material/info:")
        return
    _sentences(intact, typed=bool(context.text_b.strip()))
    _switchboard(context, second, intact, shape.num_layers, shape.num_heads)
    _ranking(effects, shape, context, context.column_px(RANKING_SHARE, LARGE_GAP_PX))


@own_fragment(linked=True)
def _switchboard(context, second: str, intact, num_layers: int, num_heads: int) -> None:
    """The numbers, the toggles and sentence A's embedding: a head switched on or off reruns only this; the
    ranking under it does not read the toggles and stays as it is. The heads switched off are the link's: the link
    and the class follow a press."""
    # The model runs before anything is drawn: the browser's redraw then follows it instead of sharing the cores.
    heads_off = heads_off_now(num_layers, num_heads)
    current = experiments.sentence_pair(context.model_name, context.text, second, heads_off)
    # A press shows the numbers it fetches from the App's route at once; the run it starts draws the chart.
    head_toggles(heads_off, num_layers, num_heads, numbers=switch_numbers_html(intact, current),
                 ask=urlencode({"ask": ASKS.register({"model": context.model_name, "text": context.text,
                                                      "second": second})}))
    _movement(intact, current, context)
    said([describe_embedding(intact.embeddings[0], current.embeddings[0],
                             heads_off_label(len(current.heads_off)))])

    def table() -> None:
        before, after = intact.embeddings[0], current.embeddings[0]  # (C,) each
        number_table(np.stack([before, after, after - before]), list(MOVEMENT_ROWS),
                     [str(dimension) for dimension in range(len(before))],
                     caption="Sentence A's embedding", row_title="heads", column_title="dimension")

    tables_on_request("chart-switch-embedding", table)


def ranking_table(effects, limit: int = RANKED) -> pd.DataFrame:
    """The heads that move sentence A's embedding most (1 − cos) alone, with the similarity left and its change."""
    return pd.DataFrame([{
        "layer": e.layer,
        "head": e.head,
        "A moved": e.moved,
        "cos(A, B) without it": e.similarity,
        "change": e.change,
    } for e in effects[:limit]])


def _sentences(intact, typed: bool) -> None:
    for label, tokens in zip("AB", intact.tokens, strict=True):
        st.markdown(f"**Sentence {label}**, as the model reads it:")
        token_chips(list(tokens), [token in SPECIAL for token in tokens])
    if typed:
        st.caption("A is the sidebar's text and B its second sentence.")
    else:
        st.caption("A is the sidebar's text. No second sentence is typed, so B is a default one (above); "
                   "type your own in the sidebar's “Second sentence (optional)” box to compare A with it.")


def switch_numbers_html(intact, current) -> str:
    """cos(A, B) and how far A moved, with the current heads off: HTML the toggles' script shows (and swaps for
    what the App's route answers after a press, the same function's)."""
    switched_off = len(current.heads_off)
    label = heads_off_label(switched_off)
    # 1 − cos is never below 0; two equal unit vectors' float32 dot product can come out a hair above 1, which
    # the page showed as "-0.0000".
    moved = max(0.0, 1.0 - float(current.embeddings[0] @ intact.embeddings[0]))
    similarity = metric_html(f"cos(A, B), {label}", f"{current.similarity:.4f}",
                             delta=f"{current.similarity - intact.similarity:+.4f}" if switched_off else None,
                             help="The cosine similarity of the two sentence embeddings; the arrow is the change "
                                  "since all heads were on.")
    movement = metric_html("A moved: 1 − cos(A with all heads on, A now)", f"{moved:.4f}",
                           help="0 when sentence A's embedding did not move; it grows as the vector turns away.")
    return f'<div class="aa-metrics">{similarity}{movement}</div>'


def answer(name: str, ask: Mapping[str, str], off: str) -> str:
    """The App's route for the toggles, for a model without a language-model head (components/views/switch.answer,
    which has checked that the server holds name): switch_numbers_html for the ask's text and second sentence with
    the heads `off` ("layer:head,…"). ValueError, saying why, for a text the sidebar would not take or a head the
    model does not have."""
    text, second = ask.get("text", ""), ask.get("second", "")
    if not text.strip() or not second.strip() or max(len(text), len(second)) > MAX_TEXT_CHARS:
        raise ValueError(f"a text and a second sentence of at most {MAX_TEXT_CHARS:,} characters, please")
    shape = models.model(name).shape
    heads_off = heads_off_asked(off, shape.num_layers, shape.num_heads)
    # The intact pair is the ranking's (the same pass, all heads on), without the ranking's 1 + L·nh passes.
    intact = experiments.sentence_pair(name, text, second, ())
    return switch_numbers_html(intact, experiments.sentence_pair(name, text, second, heads_off))


def _movement(intact, current, context) -> None:
    """Sentence A's embedding with all heads on, with the current heads off, and their difference. Its spec is the
    same for every toggle (the numbers are data): built once, it was most of a toggle's run."""
    before, after = intact.embeddings[0], current.embeddings[0]  # (C,) each
    matrix = np.stack([before, after, after - before])  # (3, C)
    spec = chart_memos.chart_spec(_movement_spec, len(before), context.plot_px(), context.lettering)
    draw_spec(spec, heatmap_frames(matrix, MOVEMENT_SCHEME), key="chart-switch-embedding", lettering=context.lettering)


def _movement_spec(size: int, plot_px: int, lettering) -> dict:
    rows = list(MOVEMENT_ROWS)
    chart = heatmap(np.zeros((len(rows), size)), rows, [str(i) for i in range(size)], title="Sentence A's embedding",
                    row_title="vector", column_title="dimension", scheme=MOVEMENT_SCHEME, canvas=True, size=plot_px,
                    lettering=lettering)
    return spec_and_frames(chart)[0]


def _ranking(effects, shape, context, chart_width: int) -> None:
    st.subheader("Which heads move sentence A's embedding?")
    grid = moved_grid(effects, shape.num_layers, shape.num_heads)  # (L, nh)
    chart = heatmap(grid, [str(i) for i in range(shape.num_layers)], [str(i) for i in range(shape.num_heads)],
                    title="A moved (1 − cos), one head off", row_title="layer", column_title="head",
                    scheme="blues", size=context.plot_px(chart_width, cap=36 * max(shape.num_layers, shape.num_heads)),
                    lettering=context.lettering)
    left, right = st.columns([RANKING_SHARE, 1 - RANKING_SHARE], gap="large")
    with left:
        st.altair_chart(lettered(chart, context.lettering), width="content", key="chart-switch-moves")
        said([describe_head_grid("A moved (1 − cos), each head switched off alone", grid, with_sign=False)])
        chart_downloads(lambda: chart, "switch-moves", "switch-embedding-moves-by-head")
    with right:
        four = "{:.4f}".format
        st.html(numbers_html(ranking_table(effects), "switch-embedding-ranking",
                             formats={"A moved": four, "cos(A, B) without it": four, "change": "{:+.4f}".format}))
        strongest = tuple((e.layer, e.head) for e in effects[:TOP_HEADS])
        st.button(f"Switch off the {TOP_HEADS} heads that move A most", key="switch_strongest",
                  on_click=set_heads_off, args=(strongest,), icon=":material/block:")
    closer = sum(e.change > 0 for e in effects)
    st.caption(f"Each head switched off alone, all others on. {closer} of {len(effects)} heads bring A and B "
               "closer when they go silent, the others push them apart; heads often stand in for each other, "
               "so switching several off can do more than the sum of each.")
