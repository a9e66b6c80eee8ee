"""A move of the side column's layer, head, scaling or mask (or of the all-heads view's aggregate) swaps new
numbers into the charts the browser drew: each chart's spec (all of it but its datasets) stays as it was, and
Streamlit replaces the chart's rows instead of building its Vega view anew, which costs a few times as much in the
browser. A title that named the layer, or a scale's end written into the spec, changed it at every move: the block
view's moves built 10 of its 12 charts anew."""

from __future__ import annotations

import json

import pytest

from tests.pages import assert_healthy, charts, open_page


def specs(page) -> list[dict]:
    """Each chart's spec without its datasets, in the page's order."""
    drawn = []
    for chart in charts(page):
        spec = json.loads(chart.proto.spec)
        spec.pop("datasets", None)
        drawn.append(spec)
    return drawn


@pytest.mark.parametrize(("query", "moves"), [
    ({"view": "block"}, {"layer": 1, "head": 2, "tiled_block": 4}),
    ({"view": "lesson", "step": "5"}, {"layer": 1, "head": 2}),  # the scores and the softmax
    ({"view": "lesson", "step": "7"}, {"layer": 1, "head": 2}),  # what moves: three heatmaps
    ({"view": "lab"}, {"layer": 1, "head": 2}),
    ({"view": "heads"}, {"scaling": "none", "mask": "causal", "aggregate": "rollout"}),  # the sinks' bars, the grid
    ({"view": "compare"}, {"scaling": "none", "mask": "causal"}),  # each query's largest change, under the panels
], ids=["block", "lesson-softmax", "lesson-moves", "lab", "heads", "compare"])
def test_a_move_of_the_layer_or_head_keeps_every_charts_spec(query, moves):
    page = open_page(query)
    assert_healthy(page)
    drawn = specs(page)
    assert drawn, "the view draws charts"
    for key, value in moves.items():
        control = page.slider(key=key) if isinstance(value, int) else page.segmented_control(key=key)
        control.set_value(value).run()
        assert_healthy(page)
        moved = specs(page)
        changed = [index for index, (before, after) in enumerate(zip(drawn, moved, strict=True)) if before != after]
        assert not changed, f"{key} → {value} built charts {changed} of {len(drawn)} anew"


@pytest.mark.parametrize("step", ["4", "5"], ids=["rotary", "shared"])
def test_a_head_move_keeps_the_llama_lessons_rotary_and_shared_charts(llama_link, step):
    """The head and the tokens are said over these charts, not in their titles: a head moved swaps their numbers."""
    page = open_page({**llama_link, "view": "lesson", "step": step})
    assert_healthy(page)
    drawn = specs(page)
    for head in (1, 2):
        page.slider(key="head").set_value(head).run()
        assert_healthy(page)
        changed = [index for index, (before, after) in enumerate(zip(drawn, specs(page), strict=True))
                   if before != after]
        assert not changed, f"head → {head} built charts {changed} of {len(drawn)} anew"
