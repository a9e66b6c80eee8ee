"""components/caches/ in the test's own process: what waits for a heavy-work slot, and what its caches keep."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pytest

from attention.analyses.neuron import neuron_heads
from attention.dissect.trace import build_trace
from attention.models.model_list import BUNDLED_MODEL
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.caches import chart_memos, stacks, texts, work
from components.charts.heatmap import heatmap
from tests.pages import assert_healthy, open_page

# Long enough for any machine to tokenize a sentence: the call either returns or waits for a slot that never frees.
NOT_STUCK_S = 120


def test_the_tokens_of_a_text_are_read_while_other_sessions_hold_every_heavy_slot(bundled):
    text = "tokens read while every heavy slot is taken"
    holding, release = threading.Barrier(work.HEAVY_SLOTS + 1), threading.Event()

    def hold_a_slot() -> None:
        with work.heavy_work():
            holding.wait()
            release.wait()

    with ThreadPoolExecutor(work.HEAVY_SLOTS + 1) as pool:
        holders = [pool.submit(hold_a_slot) for _ in range(work.HEAVY_SLOTS)]
        try:
            holding.wait(timeout=NOT_STUCK_S)
            tokens = pool.submit(texts.encoding, BUNDLED_MODEL, text, "").result(timeout=NOT_STUCK_S)
        finally:
            release.set()
        for holder in holders:
            holder.result()
    assert tokens.tokens == encode(bundled, text, layers=()).tokens
    assert all(hidden is None for hidden in tokens.hidden_states), "the tokenizer alone: no layer run"


def test_the_kept_neuron_numbers_are_those_of_the_settings_and_heads_asked_for(bundled):
    text = "the neuron numbers of one head are kept for every query"
    encoding = encode(bundled, text)
    for settings, heads in [(TraceSettings(layer=2), (3,)), (TraceSettings(layer=2, scaling="none"), (3,)),
                            (TraceSettings(layer=4), (5, 1)), (TraceSettings(layer=2), (3,))]:
        kept = stacks.neuron_heads(BUNDLED_MODEL, text, "", settings, heads)
        alone = neuron_heads(build_trace(bundled, encoding, settings), heads)
        assert kept.heads == alone.heads == heads
        for name in ("queries", "keys", "dots", "scaled", "weights"):
            np.testing.assert_array_equal(getattr(kept, name), getattr(alone, name), err_msg=f"{settings} {name}")


def _shown_numbers(spec: dict, frames: dict[str, bytes]) -> np.ndarray:
    """(rows, columns): what a kept heatmap's dataset would show, read back from the Arrow stream the browser gets."""
    shown = pa.ipc.open_stream(frames[spec["data"]["name"]]).read_all().to_pandas()
    return shown.pivot(index="row", columns="column").to_numpy()


def test_a_kept_chart_shows_the_numbers_it_was_asked_for_keyed_on_them_not_the_arrays_identity():
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4) / 12  # (rows, columns)
    labels = (["a", "b", "c"], ["w", "x", "y", "z"])
    spec, frames = chart_memos.drawn_chart(heatmap, matrix, *labels, title="kept")
    assert spec["description"] == "kept" and "values" not in spec["data"], "the numbers go by name, once"
    np.testing.assert_array_equal(_shown_numbers(spec, frames), matrix)
    matrix[0, 0] = 0.9  # the same array, other numbers: not the chart kept for the old ones
    spec, changed = chart_memos.drawn_chart(heatmap, matrix, *labels, title="kept")
    np.testing.assert_array_equal(_shown_numbers(spec, changed), matrix)
    assert chart_memos.drawn_chart(heatmap, matrix.copy(), *labels, title="kept")[1] == changed


def _hold_every_page_slot(holding: threading.Barrier, release: threading.Event) -> None:
    with work.page_work():
        holding.wait()
        release.wait()


def test_a_view_waits_for_a_page_slot_and_one_thread_takes_one_however_deeply_it_nests():
    holding, release, entered = threading.Barrier(work.PAGE_SLOTS + 1), threading.Event(), threading.Event()

    def draw_nested() -> None:
        with work.page_work(), work.page_work():  # nested: one slot, taken once
            entered.set()

    with ThreadPoolExecutor(work.PAGE_SLOTS + 1) as pool:
        holders = [pool.submit(_hold_every_page_slot, holding, release) for _ in range(work.PAGE_SLOTS)]
        try:
            holding.wait(timeout=NOT_STUCK_S)
            waiting = pool.submit(draw_nested)
            assert not entered.wait(timeout=1.0), "a view was drawn while every page slot was held"
        finally:
            release.set()
        waiting.result(timeout=NOT_STUCK_S)
        for holder in holders:
            holder.result()
    assert entered.is_set()
    with work.page_work():  # every slot was given back
        pass


def test_a_page_s_view_is_drawn_only_once_a_page_slot_comes_free():
    page = open_page()
    assert_healthy(page)  # the model loaded and the text read: a rerun now takes a fraction of a second
    holding, release = threading.Barrier(work.PAGE_SLOTS + 1), threading.Event()
    with ThreadPoolExecutor(work.PAGE_SLOTS + 1) as pool:
        holders = [pool.submit(_hold_every_page_slot, holding, release) for _ in range(work.PAGE_SLOTS)]
        try:
            holding.wait(timeout=NOT_STUCK_S)
            rerun = pool.submit(page.run)
            with pytest.raises(TimeoutError):
                rerun.result(timeout=2.0)  # waiting for a slot, not drawing
        finally:
            release.set()
        rerun.result(timeout=NOT_STUCK_S)
        for holder in holders:
            holder.result()
    assert_healthy(page)
