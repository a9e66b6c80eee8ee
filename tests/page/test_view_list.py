"""The page's views, one record each (components/page/view_list.py): a record's flags agree with each other and with
the page that reads them (page.py, components/page/controls.py), so that a new view's record cannot ask for what the
page never draws. Each rule is also seen failing, on a record planted beside the real ones."""

from __future__ import annotations

import dataclasses

import pytest

from attention.models.model_list import BUNDLED_MODEL
from components.page.page_state import PageState, from_query
from components.page.view_list import VIEW_NAMES, VIEWS, View, view_named

# The PageState fields a chart can pick (attention_controls writes each as "name value:g" under the controls).
NUMBERS = {field.name for field in dataclasses.fields(PageState)
           if type(getattr(PageState(), field.name)) in (int, float)}


def disagreements(views: tuple[View, ...]) -> list[str]:
    """What is wrong with the records, each problem named by its view."""
    found = []
    for kind in ("name", "label"):
        values = [getattr(view, kind) for view in views]
        found += [f"two views have the {kind} {value!r}" for value in sorted(set(values)) if values.count(value) > 1]
    for view in views:
        says = f"{view.name}:"
        if not view.name.isidentifier():
            found.append(f"{says} the name is no module's (components/views/<name>.py)")
        if not view.label.strip():
            found.append(f"{says} no label for the selector and the title")
        if unknown := [name for name in view.on_chart if name not in NUMBERS]:
            found.append(f"{says} on_chart names {unknown}, which are no number of PageState")
        if len(set(view.on_chart)) != len(view.on_chart):
            found.append(f"{says} on_chart names a field twice")
        # page.py draws a standalone view and stops: no attention controls, shapes panel, query or own run follow.
        if view.standalone and (view.on_chart or view.own_run or view.reads_query or view.shapes or view.steps
                                or view.whole_model or view.own_tokens):
            found.append(f"{says} standalone, yet it asks for what the page draws only around a view of the text")
        # A whole-model view takes the whole width: no side column for attention controls or the shapes panel.
        if view.whole_model and (view.on_chart or view.reads_query or view.shapes or view.steps):
            found.append(f"{says} whole_model, yet it asks for the attention controls or the shapes panel")
        if view.steps and not view.shapes:
            found.append(f"{says} steps without shapes: the steps' shapes are listed in the shapes panel")
        # One panel beside a view: one head's computation or the block's steps.
        if view.block_shapes and (view.shapes or view.whole_model or view.standalone):
            found.append(f"{says} block_shapes, yet the side column has another panel or none")
        # Only the layer and head sliders are drawn: no other control, no chart that picks another, no panel of one
        # head's computation under the source and scaling it does not draw.
        if view.layer_and_head_only and (view.whole_model or view.standalone or view.shapes
                                         or set(view.on_chart) - {"layer", "head"}):
            found.append(f"{says} layer_and_head_only, yet it asks for what the layer and head alone do not set")
        if view.own_head_line is not None and not view.own_head_line.strip():
            found.append(f"{says} an empty own_head_line would hide the page's line and say nothing")
        if not view.numbers_from.strip():
            found.append(f"{says} numbers_from is empty")
    return found


def test_every_records_flags_agree():
    assert not disagreements(VIEWS), "\n".join(disagreements(VIEWS))


def test_the_link_parser_reads_the_list_and_the_default_view_is_on_it():
    assert PageState().view in VIEW_NAMES
    assert view_named("atlas").whole_model and view_named("counting").standalone
    state, notices = from_query({"view": ["nowhere"]}, [BUNDLED_MODEL])
    assert state.view == PageState().view and notices == [
        f"The link's view=`nowhere` was ignored: it must be one of {', '.join(VIEW_NAMES)}. Showing view='head'."]


PLANTED = {
    "a misspelt chart control": (View("x", "X", on_chart=("layers",)), "which are no number of PageState"),
    "a flag on chart": (View("x", "X", on_chart=("present",)), "which are no number of PageState"),
    "a toy with a shapes panel": (View("x", "X", standalone=True, shapes=True), "standalone, yet"),
    "a whole model with a head slider": (View("x", "X", whole_model=True, on_chart=("head",)), "whole_model, yet"),
    "steps with no panel": (View("x", "X", steps=True), "steps without shapes"),
    "two panels": (View("x", "X", shapes=True, block_shapes=True), "block_shapes, yet"),
    "a block's panel with no side": (View("x", "X", whole_model=True, block_shapes=True), "block_shapes, yet"),
    "the layer and head beside a whole model": (View("x", "X", whole_model=True, layer_and_head_only=True),
                                                "layer_and_head_only, yet"),
    "the layer and head with τ on the chart": (View("x", "X", on_chart=("temperature",), layer_and_head_only=True),
                                               "layer_and_head_only, yet"),
    "a name taken": (View("head", "X"), "two views have the name 'head'"),
    "a label taken": (View("x", "One head"), "two views have the label 'One head'"),
    "no module's name": (View("two words", "X"), "the name is no module's"),
    "an empty head line": (View("x", "X", own_head_line=" "), "empty own_head_line"),
}


@pytest.mark.parametrize("case", PLANTED)
def test_a_record_that_disagrees_is_found(case):
    planted, problem = PLANTED[case]
    found = disagreements((*VIEWS, planted))
    assert any(problem in line for line in found), found
