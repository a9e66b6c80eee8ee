"""The all-heads grid under grouped-query attention (components/charts/grid.py), from numbers alone: where a group
of heads sharing a key/value head fits a row, each row holds whole groups, a gap between two; where it does not (a
phone's column), the heads stand one after another in as many columns as a model whose heads share nothing, their
bands shading the groups apart; the grid never outgrows its column."""

from __future__ import annotations

import numpy as np
import pytest

from components.charts.grid import GRID_GAP, GRID_SIZE, GridLayout, grid_frames, grid_layout, spec
from components.charts.heatmap import LAYER
from components.charts.lettering import READING

TOKENS = 5
NARROW, WIDE = 350, 636  # px: the grid's column on a 390-px phone, and on a 1366-px screen


def placed(layout: GridLayout, heads: int) -> list[tuple[int, int]]:
    x, y = layout.place(np.arange(heads))
    return list(zip(x.tolist(), y.tolist(), strict=True))


@pytest.mark.parametrize("width", [NARROW, WIDE])
def test_sharing_takes_no_column_from_a_narrow_grid_and_keeps_it_inside_its_column(width):
    plain = grid_layout(width, TOKENS, False)
    grouped = grid_layout(width, TOKENS, False, group=3)
    room = width - READING.label_room_px  # the column beside the summary's token axis
    if not grouped.grouped:
        assert grouped.columns == plain.columns
        assert placed(grouped, 9) == placed(plain, 9)
    assert grouped.size(9)[0] <= room


def test_a_row_holds_whole_groups_where_one_fits():
    layout = grid_layout(WIDE, TOKENS, False, group=3)
    assert layout.grouped and layout.columns == 3
    rows = [y for _, y in placed(layout, 9)]
    assert rows[0:3] == [rows[0]] * 3 and rows[3:6] == [rows[3]] * 3 and rows[0] < rows[3] < rows[6]
    pairs = grid_layout(WIDE, TOKENS, False, group=2)
    (x0, _), (x1, _), (x2, _) = placed(pairs, 3)
    assert x1 - x0 == GRID_SIZE + GRID_GAP < x2 - x1  # a gap between the two groups of a row


def test_titles_name_the_key_value_head_and_bands_sit_behind_the_pictures():
    layout = grid_layout(WIDE, TOKENS, False, group=2)
    weights = np.full((1, 4, TOKENS, TOKENS), 1 / TOKENS)  # (nl, h, T, T)
    summaries = [{"entropy": np.zeros(4), "max_weight": np.zeros(4)}]
    rows = grid_frames(weights, (0,), (0, 1, 2, 3), summaries, layout)["heads"]
    assert rows["title"].tolist() == ["head 0 · kv 0", "head 1 · kv 0", "head 2 · kv 1", "head 3 · kv 1"]
    assert rows[LAYER].tolist() == [0] * 4
    drawn = spec(1, 4, False, None, ("a",) * TOKENS, False, layout)
    assert drawn["layer"][0]["mark"]["type"] == "rect"  # the bands, under the pictures
    plain = spec(1, 4, False, None, ("a",) * TOKENS, False, grid_layout(WIDE, TOKENS, False))
    assert plain["layer"][0]["mark"]["type"] == "image"
