"""The induction lab's chart builders, from numbers, without a server: where the maps stand at every width, the
Step input's range, the curves' datasets, and the maps drawn by Vega itself."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from attention.labs.induction import InductionConfig, history_rows, train
from components.charts import induction as charts

SHORT = InductionConfig(steps=30, heads=3, vocab_size=12, held_out=16, probes=4)


@pytest.fixture(scope="module")
def run():
    return train(SHORT)


@pytest.mark.parametrize(("heads", "width", "projected"),
                         list(itertools.product([1, 2, 4, 8], [350, 600, 900, 1200], [False, True])))
def test_the_maps_fit_their_column_and_never_overlap(heads, width, projected):
    layout = charts.maps_layout(heads, width, projected)
    assert layout.size()[0] <= max(width, charts.MAP_LEAST)
    boxes = [layout.place(group, head) for group in range(len(charts.GROUPS)) for head in range(heads)]
    for (x1, y1), (x2, y2) in itertools.combinations(boxes, 2):
        assert abs(x1 - x2) >= layout.side + charts.MAP_GAP or abs(y1 - y2) >= layout.side + charts.MAP_GAP
    assert all(x + layout.side <= layout.size()[0] and y + layout.side <= layout.size()[1] for x, y in boxes)


@pytest.mark.parametrize(("heads", "width", "height"), [(4, 900, 720), (4, 1200, 720), (8, 350, 844), (2, 1000, 768)])
def test_every_map_of_a_step_is_in_sight_at_once(heads, width, height):
    layout = charts.maps_layout(heads, width, True, height)
    assert layout.size()[1] <= height - charts.MAPS_CHROME_PX
    assert layout.side >= charts.MAP_LEAST


def test_few_heads_put_the_groups_side_by_side_and_many_wrap():
    assert charts.maps_layout(1, 900).across == 3
    assert charts.maps_layout(4, 900).across == 1
    wrapped = charts.maps_layout(8, 350)
    assert wrapped.columns < 8 and wrapped.rows() == 2


def test_the_step_input_runs_over_the_kept_steps_and_starts_at_the_last(run):
    layout = charts.maps_layout(SHORT.heads, 900)
    spec = charts.maps_spec(layout, int(run.kept_steps[-1]), SHORT.keep_every)
    [param] = spec["params"]
    assert param["bind"] == {"input": "range", "min": 0, "max": 30, "step": 2, "name": "Step"}
    assert param["value"] == [{"kept": 30}]
    stopped = charts.maps_spec(layout, 29, SHORT.keep_every)  # a run stopped between two kept steps
    assert stopped["params"][0]["bind"]["max"] == 30, "the input reaches the last map"
    assert "params" not in charts.maps_spec(layout, 0, SHORT.keep_every), "before training: no input"


def test_each_map_shows_from_its_step_until_the_next_kept_one(run):
    layout = charts.maps_layout(SHORT.heads, 900)
    one, two = run.models
    frames = charts.maps_frames(one.kept, two.kept, (one.kept_previous_token, two.kept_previous_token,
                                                     one.kept_induction, two.kept_induction), run.kept_steps, layout)
    maps = frames[charts.MAPS]
    assert len(maps) == len(run.kept_steps) * 3 * SHORT.heads
    first = maps[maps[charts.STEP] == 0]
    assert set(first["until"]) == {2}
    assert set(maps[maps[charts.STEP] == 30]["until"]) == {np.iinfo(np.int32).max}
    assert frames[charts.SHOWN][charts.STEP].tolist() == run.kept_steps.tolist()


def test_the_curves_data_are_the_csvs_rows(run):
    rows = history_rows(run)
    frames = charts.curves_frames(rows)
    measured = len(run.measured_steps)
    assert len(frames[charts.LOSSES]) == 2 * measured
    assert set(frames[charts.SCORES]["model"]) == set(charts.GROUP_COLOURS)
    np.testing.assert_array_equal(frames[charts.SCORES]["induction"], rows["induction"])


def test_vega_draws_the_maps_at_a_kept_step(run):
    import json

    import vl_convert

    layout = charts.maps_layout(SHORT.heads, 600)
    one, two = run.models
    frames = charts.maps_frames(one.kept, two.kept, (one.kept_previous_token, two.kept_previous_token,
                                                     one.kept_induction, two.kept_induction), run.kept_steps, layout)
    spec = charts.maps_spec(layout, 30, SHORT.keep_every)
    spec["datasets"] = {name: json.loads(frame.to_json(orient="records")) for name, frame in frames.items()}
    assert vl_convert.vegalite_to_png(spec)[:4] == b"\x89PNG"
