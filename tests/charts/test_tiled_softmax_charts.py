"""The tiled softmax's charts (components/charts/tiled_softmax.py): three panels of the running max, sum and rescale
over the blocks, the first block's rescale left undrawn, and the row against the plain softmax, its keys' tokens as
data, never part of an expression."""

from __future__ import annotations

import math

import numpy as np
import torch

from attention.stages.tiled_softmax import tiled_softmax
from components.charts.draw import spec_and_frames
from components.charts.tiled_softmax import QUANTITIES, row_against_plain, row_numbers, running_panels, steps_frame
from tests.charts.test_lens_chart import HOSTILE, expressions_in

SCORES = torch.tensor([0.0, 1.0, 5.0, 2.0, -1.0, 6.0])  # blocks of 2: [0, 1], [5, 2], [-1, 6]: the max grows twice


def test_the_panels_draw_every_running_quantity_and_leave_the_first_rescale_out():
    steps = tiled_softmax(SCORES, 2).steps
    drawn, table = steps_frame(steps), steps_frame(steps, drawn=False)
    assert drawn["max_after"].tolist() == [1.0, 5.0, 6.0]
    assert math.isnan(drawn["rescale"][0]) and table["rescale"][0] == 0.0, "the core's 0 in the table only"
    np.testing.assert_allclose(drawn["rescale"][1:], [math.exp(1 - 5), math.exp(5 - 6)], rtol=1e-6)
    chart = running_panels(steps_frame(steps), title="3 blocks of 2 keys", width=300).to_dict(validate=True)
    assert [panel["title"]["text"] for panel in chart["vconcat"]] == list(QUANTITIES.values())


def test_the_row_chart_holds_its_tokens_as_data():
    weights = torch.softmax(SCORES, dim=-1).numpy()  # (T,)
    chart = row_against_plain(row_numbers(weights, weights, 2), HOSTILE, title="Query 5", width=300)
    chart = chart.to_dict(validate=True)
    expressions = " ".join(expressions_in(chart))
    assert not [token for token in ("<b>", "${x}", "a-very-long-token") if token in expressions], (
        "a token is data (a parameter's value), never part of an expression")
    assert HOSTILE[2] in str(chart["params"]), "the tokens reach the axis as a parameter's value"


def test_one_panels_spec_serves_every_row_of_blocks():
    """The block view keeps the panels' spec built on no blocks at all, and sends each row's blocks beside it."""
    def spec(steps) -> dict:
        return spec_and_frames(running_panels(steps_frame(steps), title="t", width=300))[0]

    assert spec([]) == spec(tiled_softmax(SCORES, 2).steps) == spec(tiled_softmax(SCORES, 4).steps)
