"""What draw_spec hands Streamlit for a chart's datasets: Arrow tables whose rows are those pandas' own way to Arrow
gives, built from the columns' arrays (components/charts/draw.arrow_table)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from components.charts.draw import arrow_table
from components.charts.heatmap import heatmap_frames, pictures_by_head
from components.charts.scrub import panel_frames
from components.charts.token_axes import SENTENCE_B_COLOUR


def _rows(table: pa.Table) -> list[dict]:
    """A table's rows, NaN and null both None: what the browser's Vega reads (isValid is false for either)."""
    return [{name: None if isinstance(value, float) and np.isnan(value) else value for name, value in row.items()}
            for row in table.to_pylist()]


def _app_frames() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(2, 3, 5, 5)).astype(np.float32)
    scores[..., 0, 4] = np.nan  # a masked cell
    frames = {**heatmap_frames(scores[0, 0], "redblue"),
              **panel_frames(scores, (0, 1), (0, 1, 2), "redblue", False, "p0"),
              "pictures": pictures_by_head(rng.random((1, 2, 40, 40)), np.array([[[0, 1], [0, 1]]]), "blues", (0,),
                                           (0, 1)),
              "labels": pd.DataFrame({"label": ["[CLS]", "it", None], "colour": [SENTENCE_B_COLOUR] * 3,
                                      "second": [False, True, True], "at": np.arange(3, dtype=np.uint16)})}
    return {name: frame for name, frame in frames.items() if isinstance(frame, pd.DataFrame)}


@pytest.mark.parametrize("name", list(_app_frames()))
def test_a_frame_goes_by_its_columns_with_the_rows_pandas_way_gives(name):
    frame = _app_frames()[name]
    table = arrow_table(frame)
    assert isinstance(table, pa.Table)
    assert table.column_names == [str(column) for column in frame.columns]
    assert _rows(table) == _rows(pa.Table.from_pandas(frame))


def test_nan_is_null_as_pandas_way_makes_it():
    table = arrow_table(pd.DataFrame({"value": np.array([0.5, np.nan], dtype=np.float32)}))
    assert table.column("value").null_count == 1


def test_a_frame_with_an_index_of_its_own_and_what_is_arrow_already_pass_as_they_are():
    indexed = pd.DataFrame({"value": [1.0, 2.0]}, index=[3, 7])
    numbered = pd.DataFrame({0: [1.0, 2.0]})
    table, data = pa.table({"value": [1.0]}), b"arrow bytes"
    assert arrow_table(indexed) is indexed
    assert arrow_table(numbered) is numbered
    assert arrow_table(table) is table
    assert arrow_table(data) is data
