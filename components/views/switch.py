"""Switching heads off: BERT guesses the word behind [MASK]; toggles silence heads, one layer per row.

Needs a checkpoint with the masked-language-model head (bert-base-uncased has one; the
bundled all-MiniLM-L6-v2 does not, and then the view says so and offers another model).
The model is cached once per server and shared (components/compute.py); predictions are
cached per sentence and set of heads off, and the head ranking per sentence.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attention import BUNDLED_MODEL, ModelLoadError
from attention.head_switch import SUGGESTED_MODEL, HeadEffect, Prediction
from components import compute, controls
from components.heatmap import fitted_size, heatmap
from components.tables import numbers_html

DEFAULT_SENTENCE = "the capital of france is [MASK] ."
SENTENCE_KEY = "switch_sentence"
MAX_SENTENCE_CHARS = 500  # a sentence or two; the ranking runs the model once per layer
MODEL_KEY = "_switch_model"  # the model the toggles were made for
RANKED = 10  # heads listed in the ranking table
TOP_HEADS = 3  # heads the "switch off the strongest" button silences
RANKING_SHARE = 0.4  # of the view's width for the ranking's heatmap; its table beside it takes the rest
LARGE_GAP_PX = 51  # st.columns(gap="large"): 3rem at the theme's 17-px font


def render(context) -> None:
    name = context.model_name
    try:
        masked_lm, missing_head = compute.masked_lm(name)
    except ModelLoadError as error:
        st.error(str(error), icon=":material/error:")
        return
    if masked_lm is None:
        _offer_models(name, missing_head)
        return
    shape = masked_lm.shape
    _forget_toggles_of_other_models(name)
    mask = masked_lm.tokenizer.mask_token
    st.markdown(
        f"BERT was trained to guess hidden words. Type a sentence with one {mask}; below are the model's five "
        "best guesses. Switch heads off (their context is set to zero before the layer's output projection) "
        "and watch how much of the guess each one carried."
    )
    if SENTENCE_KEY not in st.session_state:  # the page's text if it has a mask to fill in
        usable = mask in context.text and len(context.text) <= MAX_SENTENCE_CHARS
        st.session_state[SENTENCE_KEY] = context.text if usable else DEFAULT_SENTENCE
    sentence = st.text_input("Sentence", key=SENTENCE_KEY, max_chars=MAX_SENTENCE_CHARS,
                             help=f"Exactly one {mask}; the model reads at most "
                                  f"{masked_lm.model.config.max_position_embeddings} tokens.")
    try:
        intact, effects = compute.ranking(name, sentence)
    except ValueError as error:
        st.warning(str(error), icon=":material/info:")
        return

    guesses = st.container()  # drawn above the toggles, filled once they are read
    heads_off = head_toggles(shape.num_layers, shape.num_heads)
    with guesses:
        _guesses(intact, compute.prediction(name, sentence, heads_off), len(heads_off))
    _ranking(intact, effects, shape, context.column_px(RANKING_SHARE, LARGE_GAP_PX))


def head_toggles(num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """One row of pills per layer; a selected pill is a head switched off. Returns (layer, head) pairs."""
    st.markdown("**Heads switched off**: click a head to silence it, again to bring it back.")
    heads_off = []
    for layer in range(num_layers):
        name_column, pills_column = st.columns([1, 8], vertical_alignment="center")
        name_column.markdown(f"layer {layer}")
        chosen = pills_column.pills(f"Layer {layer}: heads off", list(range(num_heads)), selection_mode="multi",
                                    key=_toggle_key(layer), label_visibility="collapsed", format_func=str)
        heads_off += [(layer, head) for head in sorted(chosen)]
    st.button("Switch all heads back on", key="switch_reset", icon=":material/restart_alt:",
              on_click=_set_heads_off, args=((), num_layers))
    return tuple(heads_off)


def ranking_table(effects: tuple[HeadEffect, ...], top_word: str, limit: int = RANKED) -> pd.DataFrame:
    """The heads whose removal costs the top word most, with the probability left and the new top word."""
    return pd.DataFrame([{
        "layer": e.layer,
        "head": e.head,
        f"P({top_word}) without it": e.probability,
        "drop (points)": 100 * e.drop,
        "top word without it": e.top_word,
    } for e in effects[:limit]])


def _guesses(intact: Prediction, current: Prediction, switched_off: int) -> None:
    top_id, top_word = intact.top_ids[0], intact.top_words[0]
    before, after = intact.top_probabilities[0], current.probability_of(top_id)
    label = "all heads on" if not switched_off else f"{switched_off} head{'s' * (switched_off > 1)} off"
    metric_column, table_column = st.columns([1, 3], gap="medium")
    metric_column.metric(f"P({top_word}), {label}", percent(after),
                         delta=f"{points(after - before)} points" if switched_off else None,
                         help=f"“{top_word}” is the intact model's top word; the arrow is the change since all "
                              "heads were on.")
    columns = {"rank": range(1, len(intact.top_words) + 1), "all heads on": intact.top_words,
               "P (all on)": intact.top_probabilities}
    if switched_off:
        columns |= {f"with {label}": current.top_words, f"P ({label})": current.top_probabilities}
    probabilities = tuple(name for name in columns if name.startswith("P ("))
    table_column.html(numbers_html(pd.DataFrame(columns), "switch-top5", bars=probabilities,
                                   formats=dict.fromkeys(probabilities, percent)))
    st.caption(f"The guesses for {intact.tokens[intact.mask_index]} at token {intact.mask_index} of "
               f"{' '.join(intact.tokens)}.")


def percent(probability: float) -> str:
    """A probability as a percentage; the tiny ones of an untrained model in scientific notation."""
    return f"{probability:.1%}" if probability >= 1e-3 else f"{probability * 100:.1e}%"


def points(change: float) -> str:
    """A change of probability in percentage points, with its sign."""
    return f"{change * 100:+.1f}" if abs(change) >= 5e-4 else f"{change * 100:+.1e}"


def _ranking(intact: Prediction, effects: tuple[HeadEffect, ...], shape, chart_width: int) -> None:
    top_word = intact.top_words[0]
    num_layers, num_heads = shape.num_layers, shape.num_heads
    st.subheader(f"Which heads carry “{top_word}”?")
    grid = compute.drop_grid(effects, shape)  # (L, nh)
    chart = heatmap(grid, [str(i) for i in range(num_layers)], [str(i) for i in range(num_heads)],
                    title=f"Drop in P({top_word}), points", row_title="layer",
                    column_title="head", scheme="redblue",
                    size=fitted_size(chart_width, cap=36 * max(num_layers, num_heads)))
    left, right = st.columns([RANKING_SHARE, 1 - RANKING_SHARE], gap="large")
    with left:
        st.altair_chart(chart, width="content", key="chart-switch-drops")
    with right:
        st.html(numbers_html(ranking_table(effects, top_word), "switch-ranking",
                             formats={f"P({top_word}) without it": percent, "drop (points)": "{:+.2f}".format}))
        strongest = tuple((e.layer, e.head) for e in effects[:TOP_HEADS])
        st.button(f"Switch off the {TOP_HEADS} heads with the largest drop", key="switch_strongest",
                  on_click=_set_heads_off, args=(strongest, num_layers), icon=":material/block:")
    changed = [e for e in effects if e.top_word != top_word]
    st.caption(
        f"Each head switched off alone, all others on. Blue: the head helped (P({top_word}) falls without it); "
        f"red: it worked against the word. {len(changed)} of {len(effects)} heads change the top word on their "
        "own; heads often stand in for each other, so switching several off can do more than the sum of each."
    )


def _offer_models(name: str, reason: str) -> None:
    st.info(reason, icon=":material/info:")
    others = sorted((m for m in compute.model_names() if m not in (name, BUNDLED_MODEL)),
                    key=lambda m: m != SUGGESTED_MODEL)  # the suggestion first
    st.markdown("Load a model that has the head (the whole page switches to it):")
    for model in others:
        hint = " (from the Hugging Face Hub: downloads on first use)" if compute.is_hub_model(model) else ""
        st.button(f"Load {model}{hint}", key=f"switch_load_{model}", on_click=_use_model, args=(model,),
                  type="primary" if model == SUGGESTED_MODEL else "secondary")
    st.caption(f"A local checkpoint saved from BertForMaskedLM appears here, and in the sidebar's model list, "
               f"once its folder is in the {compute.MODEL_DIRS_ENV} environment variable.")


def _use_model(model: str) -> None:
    controls.request(model=model)


def _toggle_key(layer: int) -> str:
    return f"switch_off_{layer}"


def _set_heads_off(pairs, num_layers: int) -> None:
    for layer in range(num_layers):
        st.session_state[_toggle_key(layer)] = sorted(h for (at, h) in pairs if at == layer)


def _forget_toggles_of_other_models(name: str) -> None:
    """Toggles belong to one model's heads: a new model starts with all of its heads on."""
    if st.session_state.get(MODEL_KEY) != name:
        for key in [k for k in st.session_state if k.startswith("switch_off_")]:
            del st.session_state[key]
        st.session_state[MODEL_KEY] = name
