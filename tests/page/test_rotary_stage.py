"""The one-head view's Rotation stage, on the tiny Llama of harness/checkpoints.py opened by a link (model=<folder>):
the pair of q and k before and after their turn, the largest score change when every position moves by Δ, and the
score against distance, each number the core's (attention/dissect/rotary_views.py, tested against transformers in
tests/core/test_rotary_views.py). A model whose positions are added (BERT) offers no Rotation stage."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.pages import LLAMA_TEXT, assert_healthy, chart_title, charts, open_page, title_text

TEXT = LLAMA_TEXT
ROTATION = "Rotation"
PAIR_TITLE = "of q and k, turned"  # words of the pair chart's title


@pytest.fixture(scope="module")
def loaded(tiny_llama_checkpoint):
    from attention.models.loading import load_model

    return load_model(str(tiny_llama_checkpoint))


@pytest.fixture
def llama_link(tiny_llama_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_llama_checkpoint))
    return {"model": str(tiny_llama_checkpoint), "text": TEXT, "view": "head"}


def core_turn(loaded, **settings):
    from attention.dissect.rotary_views import head_turn
    from attention.dissect.trace import build_trace
    from attention.stages.settings import TraceSettings
    from attention.text.encoding import encode

    return head_turn(loaded, build_trace(loaded, encode(loaded, TEXT), TraceSettings(**settings)))


def chart_titled(page, words: str):
    """The one chart whose title (a panel's, for a chart of several) holds these words."""
    [chart] = [chart for chart in charts(page) if words in chart_title(chart) or words in " ".join(
        title_text(part["title"]) for part in json.loads(chart.proto.spec).get("vconcat", []) if "title" in part)]
    return chart


def chart_rows(chart) -> dict[str, list[dict]]:
    """Every dataset of a chart (named or inline) as rows, by name."""
    import pyarrow as pa

    found = {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas().to_dict("records")
             for d in chart.proto.datasets}
    if chart.proto.HasField("data") and chart.proto.data.data:
        found[""] = pa.ipc.open_stream(chart.proto.data.data).read_all().to_pandas().to_dict("records")
    return found


def arrow_points(page) -> dict[str, tuple[float, float]]:
    """The pair chart's four arrows' tips ("q before", "q after", "k before", "k after"), by name."""
    chart = chart_titled(page, PAIR_TITLE)
    return {row["what"]: (row["x"], row["y"]) for rows in chart_rows(chart).values() for row in rows
            if row.get("kind") == "arrow"}


def shift_metric(page):
    [metric] = [m for m in page.metric if "Largest |score change| at Δ" in m.label]
    return metric


def test_a_llamas_head_view_offers_the_rotation_stage_and_draws_the_core_numbers(llama_link, loaded):
    from attention.dissect.rotary_views import decay, pair_picture, shift_test

    page = open_page({**llama_link, "layer": "1", "head": "3"})
    assert_healthy(page)
    stage = page.segmented_control(key="head_stage")
    assert ROTATION in stage.options
    stage.set_value(ROTATION).run()
    assert_healthy(page)
    turn = core_turn(loaded, layer=1, head=3)
    query = min(1, len(turn.tokens) - 1)  # the page's query (query=1 unless a link says otherwise)

    # the pair: q of the query and k of the first token, before and after their turn, pair 0 by default
    picture = pair_picture(turn, query, 0, 0)
    pair = chart_titled(page, PAIR_TITLE)
    points = arrow_points(page)
    for what, value in (("q before", picture.query_before), ("q after", picture.query_after),
                        ("k before", picture.key_before), ("k after", picture.key_after)):
        np.testing.assert_allclose(points[what], value, rtol=1e-6, atol=1e-7)
    assert "Pair 0 (numbers 0 and 4)" in chart_title(pair)  # the tiny Llama's heads: d = 8

    # pair 3, the slowest of the tiny Llama's 4: its picture follows
    page.slider(key="rotary_pair").set_value(3).run()
    assert_healthy(page)
    picture = pair_picture(turn, query, 0, 3)
    points = arrow_points(page)
    np.testing.assert_allclose(points["q after"], picture.query_after, rtol=1e-6, atol=1e-7)

    # the shift test: the metric shows the core's largest change, for the Δ chosen
    for shift in (page.number_input(key="rotary_shift").value, 1000):
        page.number_input(key="rotary_shift").set_value(shift).run()
        assert_healthy(page)
        expected = shift_test(turn, shift).largest_change
        assert float(shift_metric(page).value) == pytest.approx(expected, rel=0.01, abs=1e-12)

    # the score against distance, for this q and k, and the fixed vector's
    curve = decay(turn, query, 0)
    rows = [row for rows in chart_rows(chart_titled(page, "against distance")).values() for row in rows
            if "distance" in row]
    chosen = sorted((row["distance"], row["score"]) for row in rows if row["series"] == "this q and k")
    fixed = sorted((row["distance"], row["score"]) for row in rows if row["series"] != "this q and k")
    np.testing.assert_allclose([score for _, score in chosen], curve.scores, rtol=1e-6)
    np.testing.assert_allclose([score for _, score in fixed], curve.fixed, rtol=1e-6)
    assert [distance for distance, _ in chosen] == list(curve.distances)


def test_a_shift_past_the_bound_says_so_and_breaks_nothing(llama_link):
    from attention.dissect.rotary_views import MAX_SHIFT

    page = open_page(llama_link)
    page.segmented_control(key="head_stage").set_value(ROTATION).run()
    page.number_input(key="rotary_shift").set_value(MAX_SHIFT + 1).run()
    assert_healthy(page)
    assert any(f"{MAX_SHIFT:,}" in notice.value for notice in page.warning)
    assert not [m for m in page.metric if "Largest |score change| at Δ" in m.label]


def test_the_query_and_key_selects_pick_the_pair_drawn(llama_link, loaded):
    from attention.dissect.rotary_views import pair_picture

    page = open_page(llama_link)
    page.segmented_control(key="head_stage").set_value(ROTATION).run()
    last = len(core_turn(loaded).tokens) - 1
    page.selectbox(key="rotary_query").set_value(last).run()
    page.selectbox(key="rotary_key").set_value(2).run()
    assert_healthy(page)
    picture = pair_picture(core_turn(loaded), last, 2, 0)
    points = arrow_points(page)
    np.testing.assert_allclose(points["k after"], picture.key_after, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(points["q after"], picture.query_after, rtol=1e-6, atol=1e-7)


def test_a_random_head_of_a_llama_turns_on_the_page_too(llama_link, loaded):
    page = open_page({**llama_link, "source": "random", "head_dim": "16"})
    assert_healthy(page)
    page.segmented_control(key="head_stage").set_value(ROTATION).run()
    assert_healthy(page)
    spec = json.loads(chart_titled(page, PAIR_TITLE).proto.spec)
    assert spec  # drawn
    assert page.slider(key="rotary_pair").max == 7  # d/2 − 1 for d = 16


def test_a_position_free_head_offers_no_rotation(llama_link):
    """The identity (q = k = x) and a random head of odd size turn nothing: their row of stages is BERT's."""
    for extra in ({"source": "identity"}, {"source": "random", "head_dim": "5"}):
        page = open_page({**llama_link, **extra})
        assert_healthy(page)
        assert ROTATION not in page.segmented_control(key="head_stage").options


def test_berts_row_of_stages_has_no_rotation():
    from components.views.head import STAGE_BUTTONS, STAGES

    page = open_page(view="head")
    assert_healthy(page)
    assert list(page.segmented_control(key="head_stage").options) == [STAGE_BUTTONS[stage] for stage in STAGES]
    assert ROTATION not in page.segmented_control(key="head_stage").options


def test_directions_only_draws_each_pair_at_length_one_and_keeps_its_numbers(llama_link, loaded):
    """A short k beside a long q: each vector divided by its pair's length where drawn, its numbers on hover."""
    from attention.dissect.rotary_views import pair_picture

    page = open_page(llama_link)
    page.segmented_control(key="head_stage").set_value(ROTATION).run()
    page.toggle(key="rotary_directions").set_value(True).run()
    assert_healthy(page)
    picture = pair_picture(core_turn(loaded), 1, 0, 0)
    rows = {row["what"]: row for rows in chart_rows(chart_titled(page, PAIR_TITLE)).values() for row in rows
            if row.get("kind") == "arrow"}
    for what, value, before in (("q after", picture.query_after, picture.query_before),
                                ("k after", picture.key_after, picture.key_before)):
        np.testing.assert_allclose((rows[what]["value_x"], rows[what]["value_y"]), value, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose((rows[what]["x"], rows[what]["y"]), value / np.linalg.norm(before), rtol=1e-5)
