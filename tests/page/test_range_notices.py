"""The notice of a head out of range names the source as the page's control does, in a number that agrees."""

from __future__ import annotations

from attention.stages.settings import ModelShape
from components.page.page_state import PageState, fit_to_model
from tests.pages import assert_healthy, open_page, warnings

SHAPE = ModelShape(num_layers=6, num_heads=12, hidden_size=384)


def test_one_head_is_one_head_and_the_trained_source_is_called_trained():
    _, [one] = fit_to_model(PageState(source="identity", head=3), SHAPE)
    assert one == "head=3 does not exist (the identity source gives 1 head: 0 to 0); showing head=0."
    _, [twelve] = fit_to_model(PageState(source="bert", head=30), SHAPE)
    assert "(the trained source gives 12 heads: 0 to 11)" in twelve
    _, [random] = fit_to_model(PageState(source="random", head_dim=384, head=2), SHAPE)
    assert "(the random source gives 1 head: 0 to 0)" in random


def test_a_links_head_past_the_random_sources_one_head_says_so_on_the_page():
    page = open_page({"source": "random", "head_dim": "384", "head": "2"})
    assert_healthy(page)
    assert "head=2 does not exist (the random source gives 1 head: 0 to 0); showing head=0." in warnings(page)
