"""The page on a Llama checkpoint folder opened by a link (model=<folder>): every view draws on the tiny Llama of
harness/checkpoints.py (4 query heads sharing 2 key/value heads, RoPE), with its family named, and the shapes
panel showing K and V with fewer heads than Q."""

from __future__ import annotations

import pytest

from components.page.view_list import VIEW_NAMES, view_named
from tests.pages import LLAMA_TEXT, assert_healthy, open_page

TEXT = LLAMA_TEXT


@pytest.mark.parametrize("view", VIEW_NAMES)
def test_every_view_draws_on_a_llama(view, llama_link):
    page = open_page({**llama_link, "view": view})
    assert_healthy(page)
    if not view_named(view).standalone:  # the toys train their own heads and name no model
        assert any("Llama" in caption.value and "looks back only" in caption.value for caption in page.caption)


def test_the_shapes_panel_lists_a_llamas_steps_in_order_k_and_v_with_fewer_heads_than_q(llama_link,
                                                                                          tiny_llama_checkpoint):
    """The turn and the shared heads in the trace's order, each with its shape; the letters name n_kv and say how
    many heads of each, so that K split's 2 heads against Q split's 4 read as what they are."""
    from attention.dissect.trace import build_trace
    from attention.models.loading import load_model
    from attention.stages.settings import TraceSettings
    from attention.text.encoding import encode
    from tests.page.test_page_outline import panel_rows

    page = open_page({**llama_link, "view": "head", "layer": "1", "head": "3"})
    assert_healthy(page)
    llama = load_model(str(tiny_llama_checkpoint))
    trace = build_trace(llama, encode(llama, TEXT), TraceSettings(layer=1, head=3))
    _, rows = panel_rows(page)
    assert rows == [(step.name, str(step.shape), step.formula) for step in trace.steps]
    shapes = {name: shape for name, shape, _ in rows}
    tokens = len(trace.tokens[0])
    assert shapes["Q split"] == str((1, 4, tokens, 8))
    assert shapes["K split"] == shapes["V split"] == str((1, 2, tokens, 8))
    assert shapes["K rotated"] == str((1, 2, tokens, 8)) and shapes["K repeated"] == str((1, 4, tokens, 8))
    names = [name for name, _, _ in rows]
    assert names.index("V split") < names.index("RoPE angles") < names.index("Q rotated") < names.index("K rotated") \
        < names.index("shared head of each query head") < names.index("K repeated") < names.index("V repeated") \
        < names.index("Q")
    panel = next(block.proto.body for block in page.get("html") if 'data-testid="shapes-panel"' in block.proto.body)
    assert "nh query heads (4) · n_kv key/value heads (2): K and V have fewer heads than Q" in panel


def test_the_letters_name_no_n_kv_where_every_head_has_its_own_k_and_v(llama_link):
    """The toys' random projections give K and V a head for every query head, even on a Llama."""
    page = open_page({**llama_link, "view": "head", "source": "random"})
    assert_healthy(page)
    panel = next(block.proto.body for block in page.get("html") if 'data-testid="shapes-panel"' in block.proto.body)
    assert "nh heads · d head size" in panel and "n_kv" not in panel.split('class="stage"')[0]
