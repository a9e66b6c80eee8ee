"""Every control of the all-heads view changes what it draws: a control that only changes the link (the side
column's Head slider did) tells a learner nothing. Each control is moved in turn from the view as it opens; some
chart's spec or data must then differ from before."""

from __future__ import annotations

import pytest

from tests.pages import assert_healthy, charts, open_page

TEXT = "An ophthalmologist examined it"  # a word in pieces: the Whole words toggle has something to merge
# The view's own controls and those of the side column beside it, each with a value other than its first.
MOVES = {"slider:head": 3, "segmented_control:weight_scale": "one", "toggle:words": True,
         "toggle:grid_tokens": True, "toggle:value_norm": True, "segmented_control:aggregate": "max",
         "segmented_control:source": "random", "segmented_control:scaling": "none",
         "segmented_control:mask": "causal", "toggle:colour_blind": True}


def drawn(page) -> list[tuple[str, dict]]:
    """What every chart draws: its spec and its datasets (Arrow bytes, by name)."""
    return [(chart.proto.spec, {name: bytes(data) for name, data in
                                ((dataset.name, dataset.data.data) for dataset in chart.proto.datasets)})
            for chart in charts(page)]


def control(page, kind: str, key: str):
    return getattr(page, kind)(key=key)


def test_the_moves_cover_every_control_of_the_view():
    page = open_page(view="heads", text=TEXT)
    assert_healthy(page)
    shown = {f"{kind}:{widget.key}" for kind in ("slider", "segmented_control", "toggle", "select_slider", "radio",
                                                   "selectbox", "number_input")
             for widget in getattr(page, kind) if widget.key and not widget.key.startswith("_")
             and widget.key not in ("view", "present", "preset", "text", "text_b", "model")
             and not widget.key.startswith("table_")}  # a chart's numbers as a table: tests/page/test_heads_text_page
    assert shown <= set(MOVES), f"controls with no move here: {shown - set(MOVES)}"


@pytest.mark.parametrize("move", list(MOVES))
def test_moving_a_control_of_the_all_heads_view_changes_what_is_drawn(move):
    page = open_page(view="heads", text=TEXT)
    assert_healthy(page)
    before = drawn(page)
    kind, key = move.split(":")
    control(page, kind, key).set_value(MOVES[move]).run()
    assert_healthy(page)
    assert drawn(page) != before, f"{move} changed nothing drawn"
