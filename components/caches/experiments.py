"""The labs and the comparisons: two texts side by side, the scaling lab, switching heads off, the counting toy and
the induction lab. The core's helpers that take numbers only (the lesson's facts, the switch views' grids) are the
views' own to call (tests/tooling/test_architecture.py names them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import numpy as np
import streamlit as st

from attention.analyses import compare
from attention.dissect import heads
from attention.experiments import embedding_switch, head_switch
from attention.labs import counting, induction, scaling_lab
from attention.stages.limits import PAGE_WIN_SIZE
from attention.stages.settings import TraceSettings
from attention.text import unknown
from attention.text.words import merge_weights
from components.caches.budget import BUDGET, CACHE_ENTRIES
from components.caches.layers import layer_weights, trace, whole_layer
from components.caches.models import language_model, model
from components.caches.texts import encoding, text_words, unknown_characters
from components.caches.work import heavy_work

# ---- Two texts side by side ----

def alignment_words(name: str, text: str, whole: bool = False) -> list[str]:
    """What compare.aligned_positions compares of one text run alone: its tokens, or with whole its words
    (text_words), each [UNK] written with the characters it stands for, so that it pairs only with an [UNK] of the
    same ones."""
    keys = unknown.alignment_keys(list(encoding(name, text, "").tokens[0]), unknown_characters(name, text, ""))
    return [" ".join(keys[start:stop]) for start, stop in text_words(name, text, "", whole).spans]


def head_change(name: str, text_a: str, text_b: str, settings: TraceSettings,
                count_special: bool = False, words: bool = False) -> compare.HeadChange | None:
    """The aligned pair whose weight differs most between two texts, each run alone, in settings' layer and head,
    and each query token's (word's, with words): [CLS] and [SEP] left out unless count_special (None: the texts
    share no other token)."""
    with heavy_work():
        return _head_changes(name, text_a, text_b, whole_layer(settings), count_special, words)[settings.head]


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["head_changes"])
def _head_changes(name: str, text_a: str, text_b: str, settings: TraceSettings,
                  count_special: bool, words: bool) -> tuple[compare.HeadChange | None, ...]:
    """Every head's largest change, found once per layer: a head move then reads a few numbers, where it read
    both texts' every head (whose layers a class's texts push out of _layer: two layers computed a move)."""
    positions_a, positions_b = compare.aligned_positions(*(alignment_words(name, text, words)
                                                           for text in (text_a, text_b)))
    shown_a, shown_b = (text_words(name, text, "", words) for text in (text_a, text_b))
    # (K,): [CLS] and [SEP], or GPT-2's first token (its word, with words)
    leave_out = None if count_special else np.asarray(shown_a.sinks, dtype=bool)[positions_a]
    weights_a, weights_b = (merge_weights(heads.head_weights(layer_weights(name, text, "", settings))[0], shown.spans)
                            for text, shown in ((text_a, shown_a), (text_b, shown_b)))  # (nh, W, W) each
    return compare.largest_changes(weights_a, weights_b, positions_a, positions_b, leave_out)


# ---- The scaling lab: keys (head sizes, samples, seed), (token count, τ), (text, settings, τ) ----

@st.cache_data(show_spinner="Measuring q·k for random vectors…", max_entries=CACHE_ENTRIES["lab_variance"])
def variance_by_head_size(head_sizes: tuple[int, ...], scalings: tuple[str, ...], samples: int,
                          seed: int = 0) -> dict[str, np.ndarray]:
    """{scaling: (H,)} the variance of q·k for random unit-variance vectors, at each head size."""
    return scaling_lab.variance_by_head_size(head_sizes, scalings, samples, seed)


@st.cache_data(show_spinner="Drawing random scores…", max_entries=CACHE_ENTRIES["lab_random_scores"],
               max_size=BUDGET.cache_bytes("lab_random_scores"))
def random_scores(head_sizes: tuple[int, ...], tokens: int, rows: int, seed: int = 0) -> np.ndarray:
    """(H, R, T): random raw scores q·k over `tokens` keys for every head size, drawn once per token count."""
    return scaling_lab.random_scores_by_head_size(head_sizes, tokens, rows, seed)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["lab_random_statistics"])
def random_softmax_statistics(head_sizes: tuple[int, ...], tokens: int, rows: int, scalings: tuple[str, ...],
                              temperature: float, seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """{scaling: {"entropy", "max_weight": (H,)}} of softmax over random_scores, each scaling in turn."""
    return scaling_lab.softmax_statistics_by_head_size(random_scores(head_sizes, tokens, rows, seed), head_sizes,
                                                       scalings, temperature)


def random_temperature_statistics(head_sizes: tuple[int, ...], tokens: int, rows: int,
                                  temperatures: tuple[float, ...], seed: int = 0) -> dict[str, np.ndarray]:
    """{"entropy", "max_weight": (N, H)} of softmax(random_scores / τ) at each of N temperatures: every τ of the
    lab's slider, computed once per token count (a second or two) and sent at once, so that τ moves in the
    browser."""
    with heavy_work():
        return _random_temperature_statistics(head_sizes, tokens, rows, temperatures, seed)


@st.cache_data(show_spinner="Measuring softmax at every τ…", max_entries=CACHE_ENTRIES["lab_random_by_tau"])
def _random_temperature_statistics(head_sizes: tuple[int, ...], tokens: int, rows: int,
                                   temperatures: tuple[float, ...], seed: int) -> dict[str, np.ndarray]:
    return scaling_lab.softmax_statistics_by_temperature(random_scores(head_sizes, tokens, rows, seed), temperatures)


def head_softmax_statistics(name: str, text: str, text_b: str, settings: TraceSettings, scalings: tuple[str, ...],
                            temperature: float) -> dict[str, dict[str, np.ndarray]]:
    """{scaling: {"entropy", "max_weight": (nh,)}} for every trained head of settings.layer."""
    with heavy_work():
        return _head_softmax_statistics(name, text, text_b, settings, scalings, temperature)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["lab_head_statistics"])
def _head_softmax_statistics(name: str, text: str, text_b: str, settings: TraceSettings, scalings: tuple[str, ...],
                             temperature: float) -> dict[str, dict[str, np.ndarray]]:
    layer = trace(name, text, text_b, settings)
    # Q and K as the scores read them: a Llama's turned by position, its n_kv key heads repeated for the nh query heads
    return scaling_lab.head_softmax_statistics(layer.attended("Q")[0], layer.attended("K")[0], scalings, temperature)


def temperature_row(scores_row: np.ndarray, temperatures: list[float]) -> np.ndarray:
    """(τs, T) softmax(scores_row / τ) for each τ of temperatures: one row, too small to keep, through torch."""
    return scaling_lab.temperature_row(scores_row, temperatures)


# ---- Switching heads off in a model with its language-model head: keys (model, sentence[, heads off]) ----

def prediction(name: str, sentence: str, heads_off: tuple[tuple[int, int], ...]) -> head_switch.Prediction:
    with heavy_work():
        return _prediction(name, sentence, heads_off, _layer_inputs(name, sentence))


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["switch_prediction"])
def _prediction(name: str, sentence: str, heads_off: tuple[tuple[int, int], ...],
                _intact_inputs: tuple[np.ndarray, ...]) -> head_switch.Prediction:
    """_intact_inputs (left out of the key: name and sentence make them) are the sentence's layer inputs."""
    return head_switch.predict(language_model(name)[0], sentence, heads_off, intact_inputs=_intact_inputs)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["switch_layer_inputs"])
def _layer_inputs(name: str, sentence: str) -> tuple[np.ndarray, ...]:
    """What each layer of the intact model reads: a toggle in layer l then runs layers l… only."""
    return head_switch.layer_inputs(language_model(name)[0], sentence)


def ranking(name: str, sentence: str) -> tuple[head_switch.Prediction, tuple[head_switch.HeadEffect, ...]]:
    with heavy_work():
        return _ranking(name, sentence, _layer_inputs(name, sentence))


@st.cache_data(show_spinner="Switching every head off in turn…", max_entries=CACHE_ENTRIES["switch_ranking"])
def _ranking(name: str, sentence: str, _intact_inputs: tuple[np.ndarray, ...],
             ) -> tuple[head_switch.Prediction, tuple[head_switch.HeadEffect, ...]]:
    """_intact_inputs (left out of the key) are the sentence's layer inputs, the toggles' own: one intact pass."""
    return head_switch.head_ranking(language_model(name)[0], sentence, intact_inputs=_intact_inputs)


# ---- Switching heads off in a model without the head: the sentence embedding, keys (model, text, second[, off]) ----

def sentence_pair(name: str, text: str, second: str,
                  heads_off: tuple[tuple[int, int], ...]) -> embedding_switch.EmbeddingRun:
    """The two sentences' embeddings (mean pooling, length 1) and their cosine similarity, some heads off."""
    with heavy_work():
        return _sentence_pair(name, text, second, heads_off, _pair_layer_inputs(name, text, second))


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["switch_embeddings"])
def _sentence_pair(name: str, text: str, second: str, heads_off: tuple[tuple[int, int], ...],
                   _intact_inputs: tuple[np.ndarray, ...]) -> embedding_switch.EmbeddingRun:
    """_intact_inputs (left out of the key: name, text and second make them) are the pair's layer inputs."""
    return embedding_switch.compare(model(name), text, second, heads_off, intact_inputs=_intact_inputs)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["switch_pair_layer_inputs"])
def _pair_layer_inputs(name: str, text: str, second: str) -> tuple[np.ndarray, ...]:
    """What each layer of the intact model reads from the pair: a toggle in layer l then runs layers l… only."""
    return embedding_switch.layer_inputs(model(name), text, second)


def embedding_ranking(name: str, text: str, second: str) -> tuple[embedding_switch.EmbeddingRun,
                                                                  tuple[embedding_switch.EmbeddingEffect, ...]]:
    """Every head switched off alone: how far the first sentence's embedding moves, largest first."""
    with heavy_work():
        return _embedding_ranking(name, text, second, _pair_layer_inputs(name, text, second))


@st.cache_data(show_spinner="Switching every head off in turn…", max_entries=CACHE_ENTRIES["switch_embedding_ranking"])
def _embedding_ranking(name: str, text: str, second: str, _intact_inputs: tuple[np.ndarray, ...],
                       ) -> tuple[embedding_switch.EmbeddingRun, tuple[embedding_switch.EmbeddingEffect, ...]]:
    """_intact_inputs (left out of the key) are the pair's layer inputs, the toggles' own: one intact pass."""
    return embedding_switch.head_ranking(model(name), text, second, intact_inputs=_intact_inputs)


# ---- Counting letters: trained in the session that asked (the models are tiny and nobody else's) ----

TRAINING_LIMIT_S = 120.0  # a training still running after this long stops where it is, and says so


def train_counting(config: counting.CountingConfig,
                   on_step: Callable[[counting.TrainingStep], bool | None]) -> counting.TrainingResult:
    """The head trained from scratch, on_step told every step (it returns False to stop there). Not kept: the
    session that asked keeps its own; the caller holds a turn of the line of trainings (shared.training_turns)."""
    return counting.train(config, on_step=on_step)


def counting_window(result: counting.TrainingResult, config: counting.CountingConfig,
                    sample: int) -> counting.CountingTrace:
    """What the trained head does with example window `sample` of config: its attention and its counts. Not kept:
    the trained head is the session's own."""
    return counting.inspect(result, counting.example_windows(config, 1, seed=sample))


def untrained_counting_accuracy(config: counting.CountingConfig) -> float:
    """The held-out accuracy of the head training starts from (counting.untrained): a thousand windows, once a
    setting."""
    with heavy_work():
        return _untrained_counting_accuracy(config)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["untrained_counting_accuracy"])
def _untrained_counting_accuracy(config: counting.CountingConfig) -> float:
    return counting.untrained(config).accuracy


def untrained_counting_windows(config: counting.CountingConfig, sample: int) -> dict[int, counting.CountingTrace]:
    """What the head training starts from does with example window `sample`, at every window size the page offers
    (counting.untrained_windows): kept under config but its window, so that a move of the window finds it."""
    with heavy_work():
        return _untrained_counting_windows(dataclasses.replace(config, win_size=PAGE_WIN_SIZE.low), sample)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["untrained_counting_windows"])
def _untrained_counting_windows(config: counting.CountingConfig, sample: int) -> dict[int, counting.CountingTrace]:
    return counting.untrained_windows(config, range(PAGE_WIN_SIZE.low, PAGE_WIN_SIZE.high + 1), sample)


# ---- The induction lab: two tiny decoders trained side by side; runs shared by their settings (shared.py) ----

def induction_training(config: induction.InductionConfig) -> Iterator[induction.InductionProgress]:
    """Both models trained side by side, the run so far after every step. Not kept here: the caller shares the run
    with every session of the same settings (shared.induction_runs) and holds a turn of the line of trainings."""
    return induction.training(config)


def untrained_induction(config: induction.InductionConfig) -> induction.InductionRun:
    """Both models as training starts them, measured: what their heads do by chance."""
    with heavy_work():
        return _untrained_induction(config)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["untrained_induction"])
def _untrained_induction(config: induction.InductionConfig) -> induction.InductionRun:
    return induction.untrained(config)
