"""The all-heads view for a reader who cannot see its charts: the layer × head overview and "where attention parks"
say what they draw (charts/heads_text.py), as transformers has it; the grid's table holds the ringed head's weights
and follows a move of the grid's own Layer input; the overview has its table too."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from harness.reference import bare_forward, transformers_tokenizer
from tests.page.test_number_table_page import SHOWN, as_numbers, number_tables, opened_table
from tests.pages import TEXT, assert_healthy, chart_matrix, chart_texts, charts, open_page, pick_on_chart

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def keyed_chart(page, key: str):
    [chart] = [chart for chart in charts(page) if chart.proto.id.endswith(f"-{key}")]
    return chart


def chart_rows(chart) -> pd.DataFrame:
    """A chart's inline rows, or its largest dataset's."""
    blobs = [chart.proto.data.data] if chart.proto.data.data else [d.data.data for d in chart.proto.datasets]
    return max((pa.ipc.open_stream(blob).read_all().to_pandas() for blob in blobs), key=len)


def transformers_entropy(bundled) -> np.ndarray:
    """(L, nh): each head's mean row entropy in nats, from transformers' own weights."""
    weights = np.stack([layer[0].numpy() for layer in bare_forward(bundled, TEXT)().attentions])  # (L, nh, T, T)
    return -(weights * np.log(np.where(weights > 0, weights, 1.0))).sum(-1).mean(-1)


@pytest.fixture(scope="module")
def heads_page():
    page = open_page(view="heads", text=TEXT, layer="3", head="5")
    assert_healthy(page)
    return page


def test_the_overview_says_its_most_focused_and_most_spread_out_heads_as_transformers_has_them(bundled, heads_page):
    entropy = transformers_entropy(bundled)  # (6, 12)
    drawn = chart_matrix(keyed_chart(heads_page, "overview"))
    np.testing.assert_allclose(drawn, entropy, atol=1e-4, err_msg="the chart draws transformers' entropies")
    [said] = [text for text in chart_texts(heads_page) if text.startswith("Every layer and head at a glance")]
    order = np.argsort(entropy, axis=None, kind="stable")
    named = "; ".join(f"layer {index // 12}, head {index % 12} {entropy.flat[index]:.2f}" for index in order[:3])
    last = order[-1]
    assert said == (f"Every layer and head at a glance: mean entropy in nats of 6 layers × 12 heads, from "
                    f"{entropy.flat[order[0]]:.2f} to {entropy.flat[last]:.2f}. Most focused: {named}. "
                    f"Most spread out: layer {last // 12}, head {last % 12} {entropy.flat[last]:.2f}.")
    assert len(said) < 300


def test_where_attention_parks_says_its_largest_shares_as_drawn_and_as_transformers_has_them(bundled, heads_page):
    [drawn] = [frame for frame in map(chart_rows, charts(heads_page)) if "measure" in frame]  # layer, place, share
    by_weight, by_moves = (drawn[drawn["measure"] == measure] for measure in drawn["measure"].unique())
    weights = np.stack([layer[0].numpy() for layer in bare_forward(bundled, TEXT)().attentions])  # (L, nh, T, T)
    on_key = weights.sum(axis=(1, 2)) / weights.sum(axis=(1, 2, 3))[:, None]  # (L, T): each key's share of a layer
    cls_share = by_weight[by_weight["place"] == "[CLS]"]["share"].to_numpy()
    sep_share = by_weight[by_weight["place"] == "[SEP]"]["share"].to_numpy()
    np.testing.assert_allclose(cls_share, on_key[:, 0], atol=1e-5)
    np.testing.assert_allclose(sep_share, on_key[:, -1], atol=1e-5)

    [said] = [text for text in chart_texts(heads_page) if text.startswith("Where attention parks")]
    top = by_weight.sort_values("share", ascending=False, kind="stable").head(3)
    moved = by_moves.set_index(["layer", "place"])["share"]
    named = "; ".join(f"layer {row.layer} on {row.place!r} {row.share:.0%} "
                      f"({moved[(row.layer, row.place)]:.0%} of what moves)" for row in top.itertuples())
    places = ", ".join(repr(place) for place in pd.unique(by_weight["place"]))
    assert said == (f"Where attention parks, 6 layers: each layer's share of its heads' attention on {places}. "
                    f"Largest by weight: {named}.")
    assert len(said) < 300


def test_the_grids_table_holds_the_ringed_heads_weights_and_follows_the_grids_layer(bundled):
    page = open_page(view="heads", text=TEXT, layer="3", head="5")
    assert not any("layer 3, head 5" in table.caption for table in number_tables(page))
    tables = number_tables(opened_table(page, "table_grid"))
    weights = bare_forward(bundled, TEXT)().attentions
    tokenizer = transformers_tokenizer(bundled)
    tokens = tokenizer.convert_ids_to_tokens(tokenizer(TEXT)["input_ids"])
    [head] = [table for table in tables if table.caption.startswith("Attention weights, layer 3, head 5")]
    assert [row[0] for row in head.rows] == tokens
    np.testing.assert_allclose(as_numbers(head), weights[3][0, 5].numpy(), atol=SHOWN, rtol=0)
    [mean] = [table for table in tables if table.caption.startswith("Mean of the heads, layer 3")]
    np.testing.assert_allclose(as_numbers(mean), weights[3][0].numpy().mean(axis=0), atol=SHOWN, rtol=0)

    page = pick_on_chart(page, "grid", layer=1)
    [head] = [table for table in number_tables(page) if table.caption.startswith("Attention weights, layer 1, head 5")]
    np.testing.assert_allclose(as_numbers(head), weights[1][0, 5].numpy(), atol=SHOWN, rtol=0)


def test_the_overviews_table_holds_every_heads_entropy(bundled):
    page = open_page(view="heads", text=TEXT)
    [table] = [table for table in number_tables(opened_table(page, "table_overview"))
               if table.caption.startswith("Mean entropy")]
    assert [row[0] for row in table.rows] == [f"layer {layer}" for layer in range(6)]
    np.testing.assert_allclose(as_numbers(table), transformers_entropy(bundled), atol=SHOWN, rtol=0)
