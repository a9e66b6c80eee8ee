"""The bench's cases of the offline decoder (bench/offline_decoder.py), without the decoder: what they wait for is
the line the page writes, their texts are new to the page and as long as the bundled model's, and their rows are
judged against the references they name (bench/__main__.py's rows(), over figures given here)."""

from __future__ import annotations

import re
from types import SimpleNamespace

from attention.models.loading import Provenance
from bench import offline_decoder, page_speed, server_memory
from bench.__main__ import DECODER_MEMORY, Figures, rows
from components.page.page_head import model_line
from harness.browser import Timing


def test_its_cases_wait_for_the_line_the_page_writes_once_it_shows_the_decoder():
    shape = SimpleNamespace(num_layers=30, num_heads=9, hidden_size=576)
    line = model_line(offline_decoder.NAME, shape, "Llama", "causal", "SmolLM2's weights", Provenance("Q4_1"))
    assert all(re.search(case.shows, line) for case in offline_decoder.cases())
    loading = f"Loading {offline_decoder.NAME}: dequantizing (step 2 of 3), 12 s"  # the bar, meanwhile
    assert not offline_decoder.heading().search(loading)


def test_its_texts_are_32_words_none_typed_twice_and_it_is_picked_by_its_word():
    texts = [offline_decoder.TEXT, *offline_decoder.new_texts(10)]
    assert {len(text.split()) for text in texts} == {32}
    assert len(set(texts)) == len(texts)
    assert all(offline_decoder.CASE_WORD in case.name for case in offline_decoder.cases())
    assert not any(offline_decoder.CASE_WORD in case.name for case in page_speed.app_cases("", "", ""))


def test_its_new_text_is_judged_against_its_own_forward_and_its_memory_against_its_target():
    typed = next(case for case in offline_decoder.cases() if case.group == "text")
    timings = [Timing(600.0, 400.0)] * 10
    floor = [Timing(50.0, 40.0)] * 10
    memory = server_memory.BesideBundled(55.0, 580.0, 1250.0, 1380.0, True, 40.0)
    figures = Figures([page_speed.Result(typed, timings, floor, tokens=32)], decoder_forward_s=[0.2] * 50,
                      decoder_tokens=[32], decoder_load_s=40.0, decoder_memory=memory)
    by_case = {row.case: row for row in rows(figures)}
    assert by_case[typed.name].ratio.value == 600 / (200 + 50)  # its forward's median, 200 ms, and the floor's
    assert by_case[typed.name].met is False  # 2.4× against a target of 2×
    assert by_case[DECODER_MEMORY].met is True  # 1,250 MB of the 1.3 GB
    assert any(name.startswith("peak memory") for name in by_case)
