"""Switching heads off: what each head carries of the model's own job, one layer of toggles per row.

With a language-model head, the model guesses a token and the view shows what each head carries of the
guess: BERT (bert-base-uncased) the word behind the [MASK] of a sentence, GPT-2 the token after a text.
Without one (the bundled all-MiniLM-L6-v2, a sentence-embedding model), the same toggles move the
sentence's embedding and the cosine similarity of two sentences (components/views/parts/embedding_switch.py).
Either way the view shows the tokens it works on (the page's chips are left out for it: they show the
sidebar's text read as one pair). The model is cached once per server and shared (components/caches/models.py);
results are cached per sentence and set of heads off, and the head ranking per sentence.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from attention.experiments.head_switch import HeadEffect, Prediction, drop_grid
from attention.models.loading import ModelLoadError
from attention.models.model_list import BUNDLED_MODEL
from components.caches import experiments, models, offered
from components.charts.draw import lettered
from components.charts.heatmap import heatmap
from components.charts.switch_text import describe_head_grid
from components.page import controls
from components.page.downloads import chart_downloads
from components.page.page_head import model_title
from components.page.tables import metric_html, numbers_html
from components.page.tokens import token_chips
from components.server.switch_asks import ASKS
from components.views.parts import embedding_switch
from components.views.parts.head_toggles import (
    head_toggles,
    heads_off_asked,
    heads_off_label,
    heads_off_now,
    set_heads_off,
)
from components.views.parts.own_fragment import own_fragment
from components.views.parts.scrubbed import said

DEFAULT_SENTENCE = "the capital of france is [MASK] ."
DEFAULT_TEXT = "the capital of france is"  # for a model that guesses the next token, when the page's text will not do
SENTENCE_KEY = "switch_sentence"
OBJECTIVE_KEY = "_switch_objective"  # what the sentence in SENTENCE_KEY was typed for: a masked word or the next token
MAX_SENTENCE_CHARS = 500  # a sentence or two; the ranking runs the model once per layer
RANKED = 10  # heads listed in the ranking table
TOP_HEADS = 3  # heads the "switch off the strongest" button silences
RANKING_SHARE = 0.4  # of the view's width for the ranking's heatmap; its table beside it takes the rest
LARGE_GAP_PX = 51  # st.columns(gap="large"): 3rem at the theme's 17-px font


@dataclass(frozen=True)
class Task:
    """How the view words what the model guesses, by its head's objective
    (attention.models.families.LanguageModelHead)."""

    trained: str  # what the family was trained to do, after its name
    asks: str  # what the reader types, and what the five guesses are of
    label: str  # the text input's
    help: str  # the text input's help, before how many tokens the model reads
    noun: str  # what the head guesses: "word" or "token"
    guessed: str  # what the guesses are for, said of the token the guess is read at
    default: str  # the text when the page's will not do
    needs_mask: bool  # whether the page's text is usable only with the mask token in it


TASKS = {
    "masked": Task(trained="was trained to guess hidden words",
                   asks="Type a sentence with one {mask}; below are the model's five best guesses for it",
                   label="Sentence", help="Exactly one {mask}", noun="word", guessed="{token}",
                   default=DEFAULT_SENTENCE, needs_mask=True),
    "next": Task(trained="was trained to guess the next token of a text",
                 asks="Type a text to continue; below are the model's five best guesses for the token after it",
                 label="The text to continue",
                 help="The model guesses the token after its last one (a [MASK] here is just text)", noun="token",
                 guessed="the token after “{token}”", default=DEFAULT_TEXT, needs_mask=False),
}


def render(context) -> None:
    name = context.model_name
    try:
        language_model, _ = models.language_model(name)
    except ModelLoadError as error:
        st.error(str(error), icon=":material/error:")
        return
    if language_model is None:
        embedding_switch.render(context, context.shape)
        _other_models(name)
        return
    shape = language_model.shape
    task = TASKS[language_model.head.objective]
    mask = language_model.tokenizer.mask_token
    st.markdown(
        f"{language_model.family.label} {task.trained}. {task.asks.format(mask=mask)}. Switch heads off (their "
        "context is set to zero before the layer's output projection) and watch how much of the guess each "
        "one carried."
    )
    _first_sentence(task, language_model.head.objective, context.text, mask)
    sentence = st.text_input(task.label, key=SENTENCE_KEY, max_chars=MAX_SENTENCE_CHARS,
                             help=f"{task.help.format(mask=mask)}; the model reads at most "
                                  f"{language_model.max_tokens} tokens.")
    try:
        intact, effects = experiments.ranking(name, sentence)
    except ValueError as error:
        st.warning(str(error), icon=":material/info:")
        return
    token_chips(list(intact.tokens), list(intact.special))
    _switchboard(name, sentence, intact, shape.num_layers, shape.num_heads, task)
    _ranking(intact, effects, shape, context, context.column_px(RANKING_SHARE, LARGE_GAP_PX), task)


@own_fragment(linked=True)
def _switchboard(name: str, sentence: str, intact: Prediction, num_layers: int, num_heads: int, task: Task) -> None:
    """The guesses and the toggles under them: a head switched on or off reruns only this, one forward pass and a
    table; the ranking, its heatmap and the rest of the page stay as they are (they do not read the toggles). The
    heads switched off are the link's: the link and the class follow a press."""
    # The model runs before anything is drawn: the browser's redraw then follows it instead of sharing the cores.
    heads_off = heads_off_now(num_layers, num_heads)
    # A press shows the guesses it fetches from the App's route at once (components/api/routes.py).
    head_toggles(heads_off, num_layers, num_heads,
                 numbers=guesses_html(intact, experiments.prediction(name, sentence, heads_off), task),
                 ask=urlencode({"ask": ASKS.register({"model": name, "sentence": sentence})}))


def _first_sentence(task: Task, objective: str, text: str, mask: str | None) -> None:
    """The sentence box starts from the page's text if the model can guess from it, else from the task's
    default; a sentence typed for another objective (a [MASK] sentence, when GPT-2 is loaded) starts over."""
    if st.session_state.get(OBJECTIVE_KEY) != objective:
        st.session_state.pop(SENTENCE_KEY, None)
        st.session_state[OBJECTIVE_KEY] = objective
    if SENTENCE_KEY not in st.session_state:
        usable = text.strip() and len(text) <= MAX_SENTENCE_CHARS and (not task.needs_mask or mask in text)
        st.session_state[SENTENCE_KEY] = text if usable else task.default


def ranking_table(effects: tuple[HeadEffect, ...], top_word: str, limit: int = RANKED,
                  noun: str = "word") -> pd.DataFrame:
    """The heads whose removal costs the top word most, with the probability left and the new top word."""
    return pd.DataFrame([{
        "layer": e.layer,
        "head": e.head,
        f"P({top_word}) without it": e.probability,
        "drop (points)": 100 * e.drop,
        f"top {noun} without it": e.top_word,
    } for e in effects[:limit]])


def guesses_html(intact: Prediction, current: Prediction, task: Task) -> str:
    """P(the intact top guess) with the heads off now, the five guesses before and after, and what they are for:
    HTML the toggles' script shows (and swaps for what the App's route answers after a press, this function's)."""
    switched_off = len(current.heads_off)
    top_id, top_word = intact.top_ids[0], intact.top_words[0]
    before, after = intact.top_probabilities[0], current.probability_of(top_id)
    label = heads_off_label(switched_off)
    metric = metric_html(f"P({top_word}), {label}", percent(after),
                         delta=f"{points(after - before)} points" if switched_off else None,
                         help=f"“{top_word}” is the intact model's top {task.noun}; the arrow is the change since "
                              "all heads were on.")
    columns = {"rank": range(1, len(intact.top_words) + 1), "all heads on": intact.top_words,
               "P (all on)": intact.top_probabilities}
    if switched_off:
        columns |= {f"with {label}": current.top_words, f"P ({label})": current.top_probabilities}
    probabilities = tuple(name for name in columns if name.startswith("P ("))
    table = numbers_html(pd.DataFrame(columns), "switch-top5", bars=probabilities,
                         formats=dict.fromkeys(probabilities, percent))
    guessed = task.guessed.format(token=intact.tokens[intact.position])
    caption = f"The guesses for {guessed} at token {intact.position} of {' '.join(intact.tokens)}."
    return (f'<div class="aa-guesses">{metric}{table}</div>'
            f'<p class="aa-caption" data-testid="switch-caption">{html.escape(caption)}</p>')


def answer(ask: Mapping[str, str], off: str) -> str:
    """The App's route for the toggles (components/api/routes.py): the numbers for an ask that a page of this
    server registered (server/switch_asks.py) with the heads `off` ("layer:head,…"), guesses_html for a sentence with
    a model that guesses, else the sentence embedding's (embedding_switch.answer). ValueError, saying why, for what
    the page would not run. A request never starts a model's load or a ranking: at most a pass of the model with
    all heads on and one with these off, each cached as the page's own runs are."""
    name = ask.get("model", "")
    if not models.loaded_now(name):
        raise ValueError("not a model this server has loaded")
    language_model, _ = models.language_model(name)
    if language_model is None:
        return embedding_switch.answer(name, ask, off)
    sentence = ask.get("sentence", "")
    if not sentence.strip() or len(sentence) > MAX_SENTENCE_CHARS:
        raise ValueError(f"a sentence of at most {MAX_SENTENCE_CHARS} characters, please")
    heads_off = heads_off_asked(off, language_model.shape.num_layers, language_model.shape.num_heads)
    task = TASKS[language_model.head.objective]
    # The intact guesses are the ranking's (the same pass, all heads on), without the ranking's 1 + L·nh passes.
    return guesses_html(experiments.prediction(name, sentence, ()), experiments.prediction(name, sentence, heads_off),
                        task)


def percent(probability: float) -> str:
    """A probability as a percentage; the tiny ones of an untrained model in scientific notation."""
    return f"{probability:.1%}" if probability >= 1e-3 else f"{probability * 100:.1e}%"


def points(change: float) -> str:
    """A change of probability in percentage points, with its sign."""
    return f"{change * 100:+.1f}" if abs(change) >= 5e-4 else f"{change * 100:+.1e}"


def _ranking(intact: Prediction, effects: tuple[HeadEffect, ...], shape, context, chart_width: int,
             task: Task) -> None:
    top_word = intact.top_words[0]
    num_layers, num_heads = shape.num_layers, shape.num_heads
    st.subheader(f"Which heads carry “{top_word}”?")
    grid = drop_grid(effects, shape)  # (L, nh)
    chart = heatmap(grid, [str(i) for i in range(num_layers)], [str(i) for i in range(num_heads)],
                    title=f"Drop in P({top_word}), points", row_title="layer",
                    column_title="head", scheme="redblue",
                    size=context.plot_px(chart_width, cap=36 * max(num_layers, num_heads)), lettering=context.lettering)
    left, right = st.columns([RANKING_SHARE, 1 - RANKING_SHARE], gap="large")
    with left:
        st.altair_chart(lettered(chart, context.lettering), width="content", key="chart-switch-drops")
        said([describe_head_grid(f"Drop in P({top_word!r}) in points, each head switched off alone", grid,
                                 with_sign=True)])
        chart_downloads(lambda: chart, "switch-drops", "switch-drops-by-head")
    with right:
        st.html(numbers_html(ranking_table(effects, top_word, noun=task.noun), "switch-ranking",
                             formats={f"P({top_word}) without it": percent, "drop (points)": "{:+.2f}".format}))
        strongest = tuple((e.layer, e.head) for e in effects[:TOP_HEADS])
        st.button(f"Switch off the {TOP_HEADS} heads with the largest drop", key="switch_strongest",
                  on_click=set_heads_off, args=(strongest,), icon=":material/block:")
    changed = [e for e in effects if e.top_word != top_word]
    st.caption(
        f"Each head switched off alone, all others on. Blue: the head helped (P({top_word}) falls without it); "
        f"red: it worked against the {task.noun}. {len(changed)} of {len(effects)} heads change the top "
        f"{task.noun} on their own; heads often stand in for each other, so switching several off can do more "
        "than the sum of each."
    )


def _other_models(name: str) -> None:
    """Where the guessing experiment is: models this server can load now (a local folder, a Hub model already
    downloaded) get a button; the others are named, since a download may not be possible here."""
    st.caption(f"{model_title(name)} has no language-model head, so it cannot guess the word behind [MASK] or the "
               "next token. "
               "A BERT saved with its masked-language-model head (bert-base-uncased, or a local BertForMaskedLM "
               "checkpoint) or a GPT-2 (gpt2, distilgpt2, or a local GPT-2 folder) shows what each head carries "
               "of its guess; pick one in the sidebar's model list.")
    ready = [m for m in offered.model_names() if m not in (name, BUNDLED_MODEL) and not models.needs_download(m)]
    for model in ready:
        st.button(f"Load {model_title(model)}", key=f"switch_load_{model}", on_click=_use_model, args=(model,))


def _use_model(model: str) -> None:
    controls.request(model=model)
