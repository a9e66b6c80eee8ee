"""The generation view's step heatmap (charts/generation.py): every step's rows sent once, a column a step, and a
spec whose Step input picks the column the cells show; its tokens parameters' values (never inside an expression),
one kept spec for every text of its shape. A long text's row, too large to send every step's, is one step's
heatmap."""

from __future__ import annotations

import numpy as np
import pytest

from components.charts.generation import DOMAIN, SCHEME, STEP, fits, step_row, steps_frames, steps_spec
from components.charts.heatmap import MAX_VECTOR_CELLS, heatmap
from components.charts.label_stand_ins import LABEL, stand_ins, with_labels
from components.charts.scrub import placed
from components.private_hooks import bound_input_signal
from tests.charts.test_label_stand_ins import HOSTILE, OTHER

HEADS = ("0", "1", "2", "3")
STEPS = 3
TITLE = "Layer 1: the new token's query row over the cache (grey: not cached yet)"


def step_rows(seed: int = 0) -> np.ndarray:
    """(n, nh, S): step k has cached the first S - n + 1 + k keys, its rows summing to 1 over them; NaN past them."""
    generator = np.random.default_rng(seed)
    rows = np.full((STEPS, len(HEADS), len(HOSTILE)), np.nan, dtype=np.float32)
    for step in range(STEPS):
        cached = len(HOSTILE) - STEPS + 1 + step
        weights = generator.random((len(HEADS), cached), dtype=np.float32)
        rows[step, :, :cached] = weights / weights.sum(-1, keepdims=True)
    return rows


def test_each_steps_rows_are_a_column_of_the_cells_and_the_colours_end_at_0_and_1():
    rows = step_rows()
    frames = steps_frames(rows)
    cells = frames["steps-cells"]
    assert len(cells) == len(HEADS) * len(HOSTILE)
    for step in range(STEPS):
        shown = np.full((len(HEADS), len(HOSTILE)), -1.0, dtype=np.float32)
        shown[cells["row"], cells["column"]] = cells[str(step)].astype(np.float32)  # null (not cached) -> NaN
        np.testing.assert_array_equal(shown, rows[step])
    assert frames["steps-ranges"]["value"].tolist() == list(DOMAIN)


def test_the_step_input_picks_the_column_the_cells_show_and_starts_where_placed():
    spec = placed(steps_spec(HEADS, HOSTILE, STEPS, TITLE, 320), {STEP: 2})
    [step] = [param for param in spec["params"] if param["name"] == STEP]
    assert step["bind"] == {"input": "range", "min": 0, "max": STEPS - 1, "step": 1, "name": "Step"}
    assert step["value"] == [{STEP: 2}]
    calculated = [part for layer in spec["layer"] for part in layer.get("transform", []) if part.get("as") == "value"]
    assert calculated == [{"calculate": f"datum[{bound_input_signal(STEP)}]", "as": "value"}]


def test_the_tokens_are_datasets_and_one_spec_serves_every_text_of_its_shape():
    standing = stand_ins(HEADS, HOSTILE)
    kept = steps_spec(standing[HEADS], standing[HOSTILE], STEPS, TITLE, 320)
    other = stand_ins(HEADS, OTHER)
    assert steps_spec(other[HEADS], other[OTHER], STEPS, TITLE, 320) == kept, "the stand-ins hold no token"
    given, labels = with_labels(kept, standing)
    assert with_labels(kept, other)[0] == given, "the tokens go into datasets alone"
    assert [list(frame[LABEL]) for frame in labels.values()] == [list(HEADS), list(HOSTILE)]


@pytest.mark.parametrize(("steps", "heads", "keys", "sent"), [
    (32, 64, 64, True),  # the page's most steps of the largest row drawn as cells
    (8, 12, 357, False),  # a 350-token text on a GPT-2 of 12 heads: each row a picture
    (33, 64, 64, False),  # past the budget of cells sent
])
def test_every_step_is_sent_while_each_row_is_cells_within_the_budget(steps, heads, keys, sent):
    assert fits(steps, heads, keys) is sent


def test_a_long_texts_row_is_one_steps_heatmap_drawn_as_a_picture():
    keys = [f"w{index}" for index in range(MAX_VECTOR_CELLS // len(HEADS) + 1)]
    weights = np.full((len(HEADS), len(keys)), 1 / len(keys), dtype=np.float32)
    own = heatmap(weights, list(HEADS), keys, title=TITLE, row_title="query head", column_title="cached key",
                  scheme=SCHEME, domain=list(DOMAIN), size=320)
    assert step_row(weights, HEADS, keys, TITLE, 320).to_dict() == own.to_dict()
