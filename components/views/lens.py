"""The next token, layer by layer (the logit lens, nostalgebraist 2020): every layer's residual stream read through
the model's own head, as if it were the last. A map of layers × positions, each cell its top token and how sure
the head is of it, the first layer whose top token is the final guess ringed; one layer's top guesses at every
position, picked with a slider; the top five of every cell as CSV. A model without a language-model head (the
bundled all-MiniLM-L6-v2) gets a notice and what to load instead.

It reads the page's model on the text, or the induction lab's last trained decoders in this session on their probe
sequence (parts/last_induction.py): a session that has trained none is told to, with a button to the lab.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention.analyses.logit_lens import TABLE_COLUMNS, TABLE_TOP_K
from components.caches import chart_memos, past_attention
from components.charts.draw import draw_spec
from components.charts.label_stand_ins import stand_ins, with_labels
from components.charts.lens import describe_lens, lens_frames, lens_map, lens_spec
from components.page import controls
from components.page.downloads import chart_downloads, csv_download
from components.page.tables import numbers_html
from components.views.parts import last_induction
from components.views.parts.scrubbed import said

SHOWN_POSITIONS = 16  # the map's last positions of a long text; the CSV has every one
CELL_PX = 40  # a cell wide enough for a short token: a phone's map shows fewer positions
LABEL_ROOM_PX = 90  # the row labels and their title, beside the cells
NO_HEAD = ("This model has no language-model head: {why}. Load gpt2, a SmolLM2 or bert-base-uncased (the sidebar's "
           "model list) to read its layers as next-token guesses, or read the induction lab's last trained model "
           "(above); the other views work on this one.")
SOURCE_KEY, LAYER_KEY, INDUCTION_LAYERS_KEY = "lens_source", "lens_layer", "lens_induction_layers"  # not the link's
SOURCES = {"page": "The page's model, on the text", "induction": "The induction lab's last trained model"}
RANKS = ("1st", "2nd", "3rd")  # the one-layer table's guesses, short enough for a phone's column
NONE_TRAINED = ("This session has not trained an induction model yet: train one first in the induction lab (two tiny "
                "attention-only decoders, in seconds), then come back here to read its layers.")


def render(context) -> None:
    source = st.radio("Read the layers of", list(SOURCES), format_func=SOURCES.get, key=SOURCE_KEY, horizontal=True)
    if source == "induction":
        _induction(context)
        return
    try:
        lens, why = past_attention.lens(context.model_name, context.text, context.text_b, TABLE_TOP_K)
    except ValueError as error:  # a BERT's text without its [MASK]: the lens reads the word behind it
        st.warning(str(error), icon=":material/info:")
        return
    if lens is None:
        st.info(NO_HEAD.format(why=first_sentence(why)), icon=":material/info:")
        return
    _draw(context, lens, "logit-lens")


def _induction(context) -> None:
    """The lens of the induction lab's last trained decoder (one layer or two) on its run's probe sequence."""
    trained = last_induction.last()
    if trained is None:
        st.info(NONE_TRAINED, icon=":material/info:")
        st.button("Open the induction lab", key="lens_to_induction", on_click=controls.request,
                  kwargs={"view": "induction"}, icon=":material/arrow_forward:")
        return
    layers = st.radio("Model", [2, 1], format_func=lambda count: f"{count} layer{'s' if count > 1 else ''}",
                      key=INDUCTION_LAYERS_KEY, horizontal=True)
    streams, config = trained.model(layers), trained.config
    st.markdown(f"The {layers}-layer attention-only decoder the induction lab trained in this session (seed "
                f"{config.seed}, step {streams.steps_run} of {config.steps}); it reads neither the sidebar's text nor "
                f"its model, but its run's probe sequence: "
                f"{config.probe_half} random tokens, then the same again; its tokens are numbers. It has no final "
                "norm, so a row is the residual stream times the unembedding. In the second half every next token "
                "can be known: a model that learned induction guesses it from its last layer; one layer cannot.")
    _draw(context, past_attention.induction_lens(streams), f"logit-lens-induction-{config.seed}-{layers}-layers")


def _draw(context, lens, csv_name: str) -> None:
    layers = lens.top_ids.shape[0] - 1
    columns = max(4, min(SHOWN_POSITIONS, (context.width - LABEL_ROOM_PX) // CELL_PX))
    shown = range(max(0, len(lens.positions) - columns), len(lens.positions))
    st.markdown(f"Each row is the residual stream entering a layer (row 0: the embeddings; row {layers}: the last "
                "layer's output) read through the model's own head, as if no layer came after it. A cell holds the "
                "token the head would guess there and, by its colour, how sure it is; a red ring marks the first "
                "layer whose top token is the model's final guess.")
    position_labels = [lens.tokens[lens.positions[index]] for index in shown]
    probabilities = lens.top_probabilities[:, shown.start:shown.stop, 0]  # (L + 1, P shown) of each top token
    top_tokens = [[per_layer[index][0] for index in shown] for per_layer in lens.top_tokens]
    first_layer = lens.first_layer[shown.start:shown.stop]  # (P shown,)
    arguments = (probabilities, top_tokens, first_layer, [str(layer) for layer in range(layers + 1)], position_labels)
    options = dict(title="Top next token at each layer (colour: its probability)",
                   size=context.plot_px(cap=max(360, 44 * max(len(shown), layers + 1))))
    # Built once per shape and size (a new text of as many tokens sends its numbers and tokens alone): Altair took
    # 0.3 s to build it for each new text on a GPT-2 of 6 layers at 32 tokens.
    draw_spec(*kept_lens_map(*arguments, lettering=context.lettering, **options), key="chart-lens",
              lettering=context.lettering)
    said([describe_lens(probabilities, top_tokens, first_layer, position_labels,
                        [lens.positions[index] for index in shown])])
    chart_downloads(lambda: lens_map(*arguments, lettering=context.lettering, **options), "lens", "logit-lens")
    if len(shown) < len(lens.positions):
        st.caption(f"The map shows the last {len(shown)} of the {len(lens.positions)} positions read; the CSV has "
                   "them all.")
    st.caption(_first_layers(lens, layers))
    _last_position(lens)
    _one_layer(lens, layers)
    kept = lens.top_ids.shape[2]
    csv_download(lambda: pd.DataFrame(lens.table(kept), columns=list(TABLE_COLUMNS)).to_csv(index=False,
                                                                                              float_format="%.6g"),
                 csv_name)
    st.caption(f"The CSV: {', '.join(TABLE_COLUMNS)}; the top {kept} tokens of every layer and position read.")


@st.fragment
def _one_layer(lens, layers: int) -> None:
    """One layer's top guesses at every position read, with their probabilities: the layer picked with a slider
    (the map's row), every token whole. A fragment of its own: the slider changes nothing else on the page, and a
    move reruns this table alone (the view's fragment, its map and tables, took 60 ms more of a move)."""
    if st.session_state.get(LAYER_KEY, 0) > layers:  # a model with fewer layers than the last one read
        st.session_state[LAYER_KEY] = layers
    layer = st.slider("Layer read", 0, layers, key=LAYER_KEY, help="The map's row: 0 is the embeddings, "
                      f"{layers} the last layer's output.")
    kept = min(3, lens.top_ids.shape[2])
    columns = {"at": list(lens.positions), "after": [lens.tokens[p] for p in lens.positions]}
    for rank, name in enumerate(RANKS[:kept]):
        columns[name] = [per_position[rank] for per_position in lens.top_tokens[layer]]
        columns[f"P {name}"] = lens.top_probabilities[layer, :, rank]
    st.markdown(f"**Layer {layer} read, at every position:** its top {kept} next tokens after the token at each "
                "position, with their probabilities")
    # A plain table, not the data grid, which cost the browser most of a move of this slider (tables.numbers_html)
    chances = tuple(f"P {name}" for name in RANKS[:kept])
    st.html(numbers_html(pd.DataFrame(columns), "lens-one-layer", bars=chances,
                         formats=dict.fromkeys(chances, "{:.1%}".format)))


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
    chances = ("P(top token)", "P(final guess)")
    st.html(numbers_html(pd.DataFrame({"layer read": range(len(lens.top_tokens)),
                                       "top token": [per_layer[last][0] for per_layer in lens.top_tokens],
                                       chances[0]: lens.top_probabilities[:, last, 0],
                                       chances[1]: lens.prediction_probability[:, last]}),
                         "lens-last-position", bars=chances, formats=dict.fromkeys(chances, "{:.1%}".format)))


def kept_lens_map(probabilities, top_tokens, first_layer, layer_labels, position_labels, **options
                   ) -> tuple[dict, dict]:
    """lens_map's spec and datasets: the spec built once for every lens of its shape and options, on stand-in labels
    (label_stand_ins) and zeros, its numbers, tokens and rings sent as data (lens_frames)."""
    standing = stand_ins(layer_labels, position_labels)
    spec = chart_memos.chart_spec(lens_spec, np.shape(probabilities), standing[tuple(layer_labels)],
                                  standing[tuple(position_labels)], tuple(sorted(options.items())))
    spec, labels = with_labels(spec, standing)
    return spec, {**lens_frames(probabilities, top_tokens, first_layer), **labels}
