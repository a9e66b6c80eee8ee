"""Shared key/value heads where a learner looks, on the tiny Llama of harness/checkpoints.py (4 query heads sharing 2
key/value heads: heads 0 and 1 read key/value head 0, heads 2 and 3 key/value head 1): the line under the head
control, the all-heads grid's titles and groups, the neuron view's keys of one group compared, and the shapes panel's
key/value cache per token. The bundled BERT (a key and a value head for every query head) shows no group."""

from __future__ import annotations

import html
import re

import numpy as np
import pyarrow as pa

from components.charts.grid import GRID_DATA, GRID_GAP
from tests.pages import LLAMA_TEXT, assert_healthy, open_page, pick_on_chart

TEXT = LLAMA_TEXT


def captions(page) -> list[str]:
    return [caption.value for caption in page.caption]


def grid_heads(page):
    """The all-heads grid's dataset: a row per head shown, of every layer sent, with its title and its place."""
    [chart] = [chart for chart in page.get("vega_lite_chart") if "open_head" in chart.proto.selection_mode]
    [blob] = [data.data.data for data in chart.proto.datasets if data.name == GRID_DATA]
    return pa.ipc.open_stream(blob).read_all().to_pandas(), chart.proto.spec


def panel_text(page) -> str:
    [panel] = [block.proto.body for block in page.get("html") if 'data-testid="shapes-panel"' in block.proto.body]
    return html.unescape(re.sub(r"<[^>]+>", "", panel))


def test_the_head_control_names_the_key_value_head_and_the_heads_that_share_it(llama_link):
    page = open_page({**llama_link, "view": "heads", "head": "3"})
    assert_healthy(page)
    assert "Head 3 reads key/value head 1, shared by heads 2 and 3." in captions(page)
    page.slider(key="head").set_value(0).run()
    assert_healthy(page)
    assert "Head 0 reads key/value head 0, shared by heads 0 and 1." in captions(page)


def test_a_head_picked_on_the_chart_is_named_with_its_key_value_head_by_the_view_itself(llama_link):
    """The one-head view's chart picks the head, and the view reruns alone when it moves: the line is the view's,
    under its heading, and follows the chart; the side column, which that run leaves as it was, has none."""
    page = open_page({**llama_link, "view": "head", "head": "1"})
    assert_healthy(page)
    line = "Head 1 reads key/value head 0, shared by heads 0 and 1."
    assert [caption for caption in captions(page) if "reads key/value head" in caption] == [line]
    page = pick_on_chart(page, "chart-weights", head=2)
    assert_healthy(page)
    assert "Head 2 reads key/value head 1, shared by heads 2 and 3." in captions(page)
    assert line not in captions(page)


def test_the_all_heads_grid_titles_each_head_with_its_key_value_head_and_stands_each_group_together(llama_link):
    page = open_page({**llama_link, "view": "heads", "layer": "1"})
    assert_healthy(page)
    heads, spec = grid_heads(page)
    places = heads.drop_duplicates("head").set_index("head").sort_index()
    assert places["title"].tolist() == ["head 0 · kv 0", "head 1 · kv 0", "head 2 · kv 1", "head 3 · kv 1"]
    assert places["kv"].tolist() == [0, 0, 1, 1]
    assert '"field":"title"' in spec.replace(" ", "")  # the titles drawn are the dataset's

    def apart(first: int, second: int) -> tuple[float, float]:  # the gap between two pictures, and their rows' offset
        return places.at[second, "x"] - places.at[first, "x2"], places.at[second, "y"] - places.at[first, "y"]

    assert apart(0, 1) == (GRID_GAP, 0) and apart(2, 3) == (GRID_GAP, 0)  # a group side by side
    gap, down = apart(1, 2)
    assert down > 0 or gap > GRID_GAP  # the next group on a row of its own, or further off than a head of its group
    assert any("Each key/value head is read by 2 query heads" in caption for caption in captions(page))


def test_the_neuron_view_shows_a_groups_keys_equal_and_its_queries_not(llama_link, tiny_llama_checkpoint):
    from attention.dissect.trace import build_trace
    from attention.models.loading import load_model
    from attention.stages.settings import TraceSettings
    from attention.text.encoding import encode

    page = open_page({**llama_link, "view": "neuron", "layer": "1", "head": "3", "query": "4"})
    assert_healthy(page)
    llama = load_model(str(tiny_llama_checkpoint))
    trace = build_trace(llama, encode(llama, TEXT), TraceSettings(layer=1, head=3))
    queries = trace.attended("Q")[0, :, 4]  # (nh, d) the query token's q in every head
    keys = trace.attended("K")[0]  # (nh, T, d)
    assert np.array_equal(keys[2], keys[3]) and not np.array_equal(keys[1], keys[2])
    differ = float(np.abs(queries[2] - queries[3]).max())
    tokens = keys.shape[1]
    [line] = [caption for caption in captions(page) if "share key/value head" in caption]
    assert line.startswith("Heads 2 and 3 share key/value head 1: ")
    assert f"max |difference| = 0 over {tokens} keys × 8 numbers" in line
    assert f"while query token 4's q differs from head to head (max |difference| {differ:.3g})" in line


def test_the_shapes_panel_weighs_the_key_value_cache_per_token_against_multi_head_attention(llama_link):
    page = open_page({**llama_link, "view": "heads"})
    assert_healthy(page)
    panel = panel_text(page)
    # 2 (K and V) · 2 layers · 2 key/value heads · 8 numbers · 4 bytes; a key/value head for each of 4 query heads
    assert "2 (K, V) · 2 layers · 2 key/value heads · d 8 · 4 bytes = 256 bytes in float32" in panel
    assert "128 in bfloat16" in panel
    assert "Multi-head attention (a key/value head for each of the 4 query heads): 512 bytes" in panel
    assert "2× smaller" in panel


def test_a_bert_page_names_no_group_and_weighs_its_multi_head_cache():
    """The bundled all-MiniLM-L6-v2: 6 layers of 12 heads of 32 numbers, each query head its own key and value."""
    page = open_page({"view": "heads", "head": "3"})
    assert_healthy(page)
    assert not any("key/value head" in caption for caption in captions(page))
    heads, _ = grid_heads(page)
    assert heads.drop_duplicates("head")["title"].tolist() == [f"head {head}" for head in range(12)]
    panel = panel_text(page)
    assert "2 (K, V) · 6 layers · 12 heads · d 32 · 4 bytes = 18,432 bytes in float32" in panel
    assert "Multi-head attention" not in panel and "smaller" not in panel
    page = open_page({"view": "neuron", "head": "3"})
    assert_healthy(page)
    assert not any("key/value head" in caption for caption in captions(page))
