"""Charts built once per set of arguments: specs without data, datasets as Arrow bytes, and a student's last
charts kept in their session."""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Iterable

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from components.caches.budget import BUDGET, CACHE_ENTRIES
from components.caches.work import heavy_work
from components.charts.draw import layered, spec_and_frames
from components.charts.heatmap import MAX_VECTOR_CELLS, heatmap, heatmap_frames
from components.charts.label_stand_ins import stand_ins, with_labels
from components.charts.palettes import palette_in_force
from components.private_hooks import arrow_dataset


def chart_spec(build: Callable[..., dict], *arguments) -> dict:
    """build(*arguments), a chart's spec without its data, kept: Altair's building and schema validation
    cost more than the rest of a move. Callers must not change the dict (Streamlit copies before it adds).
    Every chart kept here is kept by the palette it was drawn in as well (palettes.palette_in_force): one reader's
    colours are never another's."""
    return _chart_spec(palette_in_force(), build, *arguments)


@functools.lru_cache(maxsize=CACHE_ENTRIES["chart_spec"])
def _chart_spec(palette: str, build: Callable[..., dict], *arguments) -> dict:
    return build(*arguments)


# A student's charts, in their session: those the view's last run drew and this run's, no more than one run
# of any view draws twice (the compare view's three panels, the all-heads grid and its summary), and no more
# than 8 MB: a layer of pictures at 512 tokens is 1.1 MB.
SESSION_CHARTS = 6
SESSION_CHART_BYTES = 8 * 2**20
_SESSION_CHARTS = "_charts_drawn"
_VIEW_RUN = "_view_run"


def new_run() -> None:
    """A run of the view begins (page.explore): the charts it draws are kept in the session for the
    next run, and a chart can tell whether the browser still shows it from the run before (scrub)."""
    st.session_state[_VIEW_RUN] = view_run() + 1


def view_run() -> int:
    """The number of the view's run in this session (0 before the first)."""
    return st.session_state.get(_VIEW_RUN, 0)


def chart_data(build: Callable[..., dict], *arguments) -> dict[str, bytes]:
    """build(*arguments), a chart's datasets by name (DataFrames or Arrow tables), kept as the Arrow
    bytes st.vega_lite_chart sends: a layer's heads as pictures take a dozen PNG encodings, and a
    DataFrame of many columns takes Streamlit tens of ms to convert (the neuron view's numbers of one
    query of a 472-token text: 100 ms), which a move that only reports the head shown must not pay again.

    Kept twice over: in the shared cache, where students with the same text meet, and the student's last
    charts in their own session (SESSION_CHARTS). A move the browser has drawn already reruns the page with
    the same datasets; in a class of long texts, everybody's current charts were more than the shared cache
    held, and its least recently used entry, the next student's, was pushed out on nearly every move."""
    key, run = (_builder_name(build), palette_in_force(), arguments), view_run()
    held = st.session_state.setdefault(_SESSION_CHARTS, collections.OrderedDict())  # key -> (run, datasets)
    if key in held:
        held[key] = (run, held[key][1])
        held.move_to_end(key)
        return held[key][1]
    with heavy_work():
        datasets = _chart_data(key[0], key[1], build, *arguments)
    held[key] = (run, datasets)
    for old in [other for other, (drawn, _) in held.items() if drawn < run - 1]:  # no longer on the page
        del held[old]
    while len(held) > SESSION_CHARTS or (len(held) > 1 and _bytes(held.values()) > SESSION_CHART_BYTES):
        held.popitem(last=False)
    return datasets


def chart_data_by_key(build: Callable[..., dict], key: tuple, *arguments) -> dict[str, bytes]:
    """build(*arguments), a chart's datasets, kept as chart_data keeps them but under key, for arguments too large
    to hash on every rerun or unhashable (a training run's kept attention): key must name all they hold."""
    with heavy_work():
        return _chart_data_by_key(_builder_name(build), palette_in_force(), key, build, arguments)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["chart_data"], max_size=BUDGET.cache_bytes("chart_data"))
def _chart_data_by_key(builder: str, palette: str, key: tuple, _build: Callable[..., dict], _arguments: tuple
                       ) -> dict[str, bytes]:
    return _arrow_bytes(_build(*_arguments))


def _bytes(kept: Iterable[tuple[int, dict[str, bytes]]]) -> int:
    return sum(len(data) for _, datasets in kept for data in datasets.values())


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["chart_data"], max_size=BUDGET.cache_bytes("chart_data"))
def _chart_data(builder: str, palette: str, _build: Callable[..., dict], *arguments) -> dict[str, bytes]:
    """Keyed on the builder's name and the arguments (Streamlit leaves out a parameter named with _)."""
    return _arrow_bytes(_build(*arguments))


def kept_heatmap(matrix: np.ndarray, rows: list[str], columns: list[str], **options) -> tuple[dict, dict]:
    """heatmap(matrix, rows, columns, **options) as its bare spec and its datasets. A heatmap drawn as cells has one
    spec for every matrix of its shape (its numbers, its colours' ends, its clipped cells and its labels are data):
    the spec is built once per shape and options, and a new matrix (another layer, head or scaling) or a new text of
    as many tokens costs its datasets alone (heatmap_frames, and the labels' datasets: label_stand_ins), where
    building it with Altair cost a lesson step 100 ms. A picture, drawn from the numbers, is kept whole
    (drawn_chart)."""
    if np.size(matrix) > MAX_VECTOR_CELLS:
        return drawn_chart(heatmap, matrix, rows, columns, **options)
    clip_at = options.get("clip_at")
    shaped = {**options, "clip_at": None if clip_at is None else 1.0}  # its value is data
    standing = stand_ins(rows, columns)
    spec, labels = with_labels(chart_spec(_heatmap_spec, np.shape(matrix), standing[tuple(rows)],
                                          standing[tuple(columns)], tuple(sorted(shaped.items()))), standing)
    return spec, {**heatmap_frames(matrix, options.get("scheme", "blues"), options.get("domain"), clip_at), **labels}


def _heatmap_spec(shape: tuple[int, int], rows: tuple[str, ...], columns: tuple[str, ...], options: tuple) -> dict:
    """A layer chart, where the labels' datasets are named (label_stand_ins.with_labels)."""
    chart = heatmap(np.zeros(shape, dtype=np.float32), list(rows), list(columns), **dict(options))
    return spec_and_frames(layered(chart))[0]


def kept_token_chart(build: Callable[..., alt.TopLevelMixin], frame_of: Callable[[object], pd.DataFrame], numbers,
                     tokens: list[str], *, titles: tuple[tuple[str, ...], ...] = (), **options) -> tuple[dict, dict]:
    """build(numbers, tokens, **options), a chart of one dataset, frame_of(numbers), on a token axis: its spec, built
    once for every text of its length (on stand-in labels and numbers of zeros, as a layer chart where the labels'
    datasets are named: label_stand_ins), and its datasets. A new text of as many tokens, or new numbers, costs the
    dataset alone, where Altair built the chart anew for each (the block's bars: 250 ms a new text). build's spec
    must hold no number of the data (Vega finds the scales' ends). titles: lines of words that are data too (a
    title that says a number), each a label list, given to build as titles=; its spec is kept while their counts
    of lines stay."""
    standing = stand_ins(tokens, *titles)
    if titles:
        options["titles"] = tuple(standing[tuple(lines)] for lines in titles)
    spec = chart_spec(_token_chart_spec, build, _shapes(numbers), standing[tuple(tokens)],
                      tuple(sorted(options.items())))
    spec, labels = with_labels(spec, standing)
    return spec, {"data-0": frame_of(numbers), **labels}


def _shapes(numbers) -> tuple:
    """What a kept_token_chart's spec depends on of its numbers (an array, or a dict of arrays): their shapes."""
    if isinstance(numbers, dict):
        return tuple((name, np.shape(values)) for name, values in numbers.items())
    return ("", np.shape(numbers))


def _token_chart_spec(build: Callable[..., alt.TopLevelMixin], shapes: tuple, tokens: tuple[str, ...],
                      options: tuple) -> dict:
    zeros = np.zeros(shapes[1]) if shapes[:1] == ("",) else {name: np.zeros(shape) for name, shape in shapes}
    chart = build(zeros, list(tokens), **dict(options))
    # A column of charts stays one (its first chart a layer chart, for label_stand_ins to name the labels in)
    spec, frames = spec_and_frames(chart if isinstance(chart, alt.VConcatChart) else layered(chart))
    if list(frames) != ["data-0"]:
        raise ValueError(f"{build.__qualname__} draws {list(frames)}: kept_token_chart keeps a chart of one dataset")
    return spec


def drawn_chart(build: Callable[..., alt.TopLevelMixin], *arguments, **options) -> tuple[dict, dict[str, bytes]]:
    """build(*arguments, **options), an Altair chart, as its bare spec and the Arrow bytes of its datasets
    (charts.spec_and_frames), kept: a heatmap of a 474-token text takes Altair 14 to 18 ms to build, and a lesson
    step draws two or three of them on every rerun. The arguments may hold arrays: the key is their contents."""
    return _drawn_chart(_builder_name(build), palette_in_force(), build, arguments, options)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["drawn_chart"], max_size=BUDGET.cache_bytes("drawn_chart"))
def _drawn_chart(builder: str, palette: str, _build: Callable[..., alt.TopLevelMixin], arguments: tuple,
                 options: dict) -> tuple[dict, dict[str, bytes]]:
    """Keyed on the builder's name, the arguments and the options (Streamlit leaves out a parameter named with _)."""
    spec, frames = spec_and_frames(_build(*arguments, **options))
    return spec, _arrow_bytes(frames)


def _builder_name(build: Callable) -> str:
    """What a kept chart is keyed on in place of its builder, which Streamlit cannot hash: its full name."""
    return f"{build.__module__}.{build.__qualname__}"


def _arrow_bytes(frames: dict) -> dict[str, bytes]:
    """Datasets by name (DataFrames or Arrow tables) as the Arrow bytes st.vega_lite_chart sends."""
    return {name: arrow_dataset(frame) for name, frame in frames.items()}
