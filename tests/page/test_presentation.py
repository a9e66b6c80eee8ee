"""Presentation mode (present=1, or the sidebar's toggle): chart text for the back of a room, charts as large as
their column allows, the tensor shapes folded. Read from the specs the page sends; tests/browser/test_layout_e2e.py
checks, in Chromium, that the larger charts still keep to their columns, and that the browser draws the text at
the size asked for."""

from __future__ import annotations

import json

import pytest

from components.charts.plot_sizes import PLOT_SIZE
from components.page.link_flags import presents
from tests import pages

LEGIBLE_PX = 14  # the least size for labels and numbers on a projector
PAIR = {"text_b": "the bank raised its rates"}
VIEWS = {**{view: {"view": view} for view in ("head", "heads", "neuron", "lab", "counting", "switch",
                                                            "induction", "atlas", "block")},
         "compare": {"view": "compare", **PAIR},
         **{f"lesson-{step}": {"view": "lesson", "step": str(step), **PAIR} for step in range(1, 9)}}


def specs(page) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in pages.charts(page)]


def text_sizes(spec: dict) -> list[float]:
    """Every size the spec gives text: its config's, its axes', and its text marks' own (which the config does
    not reach); a text mark without a size of its own takes the config's."""
    config = spec.get("config", {})
    sizes = [config.get("axis", {}).get("labelFontSize", 0), config.get("text", {}).get("fontSize", 0)]
    for part in pages.spec_parts({name: value for name, value in spec.items() if name not in ("config", "datasets")}):
        if isinstance(part.get("mark"), dict) and part["mark"].get("type") == "text" and "fontSize" in part["mark"]:
            sizes.append(part["mark"]["fontSize"])
        sizes += [part[name] for name in ("labelFontSize", "titleFontSize") if isinstance(part.get(name), int | float)]
    return sizes


@pytest.mark.parametrize("name", list(VIEWS))
def test_every_chart_of_a_view_writes_its_labels_and_numbers_at_14_px_or_more(name):
    page = pages.open_page({**VIEWS[name], "present": "1"})
    pages.assert_healthy(page)
    drawn = specs(page)
    assert drawn, "the view draws charts"
    for spec in drawn:
        sizes = text_sizes(spec)
        assert min(sizes) >= LEGIBLE_PX, f"{pages.title_text(spec.get('title', ''))!r}: text at {sizes}"


@pytest.mark.parametrize("view", ["lens", "generate"])
def test_every_chart_of_a_decoders_view_writes_its_text_at_14_px_or_more(view, tiny_gpt2_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    page = pages.open_page(view=view, model=str(tiny_gpt2_checkpoint), text="what if it rains", present="1")
    pages.assert_healthy(page)
    drawn = specs(page)
    assert drawn, "the view draws charts"
    for spec in drawn:
        sizes = text_sizes(spec)
        assert min(sizes) >= LEGIBLE_PX, f"{pages.title_text(spec.get('title', ''))!r}: text at {sizes}"


def test_without_presentation_mode_the_charts_keep_the_themes_sizes():
    page = pages.open_page({"view": "lesson", "step": "2"})
    pages.assert_healthy(page)
    assert all(text_sizes(spec)[:2] == [0, 0] for spec in specs(page)), "no text size in any chart's config"


def widest_plot(page) -> int:
    return max(spec.get("width", 0) for spec in specs(page))


def test_presentation_mode_draws_a_chart_as_large_as_its_column_allows():
    normal = pages.open_page({"view": "lesson", "step": "2"})
    presenting = pages.open_page({"view": "lesson", "step": "2", "present": "1"})
    assert widest_plot(normal) <= PLOT_SIZE < widest_plot(presenting)


def shapes_expander(page):
    return next(expander for expander in page.expander if expander.label == "Tensor shapes")


def test_the_toggle_turns_presentation_mode_on_in_the_link_and_folds_the_shapes():
    page = pages.open_page()
    assert shapes_expander(page).proto.expanded is True
    page.toggle(key="present").set_value(True).run()
    pages.assert_healthy(page)
    assert page.query_params["present"] == "1"
    assert shapes_expander(page).proto.expanded is False
    assert all(min(text_sizes(spec)) >= LEGIBLE_PX for spec in specs(page))

    page.toggle(key="present").set_value(False).run()
    assert "present" not in page.query_params
    assert shapes_expander(page).proto.expanded is True


def test_a_link_in_presentation_mode_opens_with_the_toggle_on():
    page = pages.open_page(present="1")
    pages.assert_healthy(page)
    assert page.toggle(key="present").value is True
    assert not page.warning


def test_a_malformed_present_value_is_refused_with_a_notice():
    page = pages.open_page(present="yes please")
    pages.assert_healthy(page)
    assert page.toggle(key="present").value is False
    assert "present" in pages.warnings(page)


def test_a_link_opens_with_the_sidebar_closed_exactly_when_it_turns_presentation_mode_on():
    assert presents({"present": ["1"]}) and presents({"present": ["true"]})
    assert not presents({"present": ["0"]}) and not presents({"present": ["yes please"]})
    assert not presents({})


def test_the_lessons_context_labels_every_token_on_a_projector():
    """13 tokens × 32 dimensions: rows of 16 px under labels 17 px apart labelled every other token."""
    page = pages.open_page({"view": "lesson", "step": "6", **PAIR, "present": "1"})
    pages.assert_healthy(page)
    context = next(spec for spec in specs(page) if pages.title_text(spec.get("title", "")).startswith("Context"))
    rows = next(part["encoding"]["y"]["axis"]["values"] for part in pages.spec_parts(context)
                if "axis" in part.get("encoding", {}).get("y", {}))
    assert rows == list(range(13))
