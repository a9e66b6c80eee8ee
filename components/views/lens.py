"""The next token, layer by layer (the logit lens, nostalgebraist 2020): every layer's residual stream read through
the model's own head, as if it were the last. A map of layers × positions, each cell its top token and how sure
the head is of it, the first layer whose top token is the final guess ringed; the top five of every cell as CSV.
A model without a language-model head (the bundled all-MiniLM-L6-v2) gets a notice and what to load instead.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attention.analyses.logit_lens import TABLE_COLUMNS, TABLE_TOP_K
from components.caches import past_attention
from components.charts.draw import lettered
from components.charts.lens import lens_map
from components.page.downloads import chart_downloads, csv_download

SHOWN_POSITIONS = 16  # the map's last positions of a long text; the CSV has every one
CELL_PX = 40  # a cell wide enough for a short token: a phone's map shows fewer positions
LABEL_ROOM_PX = 90  # the row labels and their title, beside the cells
NO_HEAD = ("This model has no language-model head: {why}. Load gpt2, a SmolLM2 or bert-base-uncased (the sidebar's "
           "model list) to read its layers as next-token guesses; the other views work on this one.")


def render(context) -> None:
    try:
        lens, why = past_attention.lens(context.model_name, context.text, context.text_b, TABLE_TOP_K)
    except ValueError as error:  # a BERT's text without its [MASK]: the lens reads the word behind it
        st.warning(str(error), icon=":material/info:")
        return
    if lens is None:
        st.info(NO_HEAD.format(why=first_sentence(why)), icon=":material/info:")
        return
    layers = lens.top_ids.shape[0] - 1
    columns = max(4, min(SHOWN_POSITIONS, (context.width - LABEL_ROOM_PX) // CELL_PX))
    shown = range(max(0, len(lens.positions) - columns), len(lens.positions))
    st.markdown(f"Each row is the residual stream entering a layer (row 0: the embeddings; row {layers}: the last "
                "layer's output) read through the model's own head, as if no layer came after it. A cell holds the "
                "token the head would guess there and, by its colour, how sure it is; a red ring marks the first "
                "layer whose top token is the model's final guess.")
    position_labels = [lens.tokens[lens.positions[index]] for index in shown]
    chart = lens_map(lens.top_probabilities[:, shown.start:shown.stop, 0],
                     [[per_layer[index][0] for index in shown] for per_layer in lens.top_tokens],
                     lens.first_layer[shown.start:shown.stop], [str(layer) for layer in range(layers + 1)],
                     position_labels, title="Top next token at each layer (colour: its probability)",
                     size=context.plot_px(cap=max(360, 44 * max(len(shown), layers + 1))),
                     lettering=context.lettering)
    st.altair_chart(lettered(chart, context.lettering), width="content", key="chart-lens")
    chart_downloads(lambda: chart, "lens", "logit-lens")
    if len(shown) < len(lens.positions):
        st.caption(f"The map shows the last {len(shown)} of the {len(lens.positions)} positions read; the CSV has "
                   "them all.")
    st.caption(_first_layers(lens, layers))
    _last_position(lens)
    csv_download(lambda: pd.DataFrame(lens.table(), columns=list(TABLE_COLUMNS)).to_csv(index=False,
                                                                                          float_format="%.6g"),
                 "logit-lens")
    st.caption(f"The CSV: {', '.join(TABLE_COLUMNS)}; the top {TABLE_TOP_K} tokens of every layer and position read.")


def _first_layers(lens, layers: int) -> str:
    """Where the final guess rises to the top, in words: how many positions have it before the last layer."""
    early = int((lens.first_layer < layers).sum())
    return (f"The final guess is on top before the output at {early} of the {len(lens.positions)} positions read; "
            f"on average from row {float(lens.first_layer.mean()):.1f} of {layers}.")


def first_sentence(why: str | None) -> str:
    """The first sentence of the core's reason, without its stop: what the model lacks (the rest says what to load)."""
    return (why or "its checkpoint holds none").split(". ")[0].rstrip(".")


def _last_position(lens) -> None:
    """The guess after the text's last token read, layer by layer, as a table: every token whole, however many
    layers the map squeezes into its rows."""
    last = len(lens.positions) - 1
    final = lens.top_tokens[-1][last][0]
    st.markdown(f"**After the last token, {lens.tokens[lens.positions[last]]!r}, layer by layer** (the final guess: "
                f"{final!r})")
    st.dataframe(pd.DataFrame({"layer read": range(len(lens.top_tokens)),
                               "top token": [per_layer[last][0] for per_layer in lens.top_tokens],
                               "P(top token)": lens.top_probabilities[:, last, 0],
                               "P(final guess)": lens.prediction_probability[:, last]}),
                 hide_index=True, height=min(400, 36 * (len(lens.top_tokens) + 1)),
                 column_config={name: st.column_config.NumberColumn(format="percent")
                                for name in ("P(top token)", "P(final guess)")})
