"""The all-heads grid's own controls rerun the grid alone, in Chromium: the heading, the grid with its summary, and
the controls that change only them (how the heads are summed up, the weights' colours, whole words, value norm, the
tokens beside the maps, the layer on the chart) are a fragment of their own (components/views/heads.py). A press of
one sends the server's run of that part, not the side column (its projection source, scaling and mask, its shapes
panel), the overview or the parks, as read off the websocket. What the press changed is on the page, the link and
the heading follow it, and a press of the side column's mask, which must redraw the whole view, still does.
"""

from __future__ import annotations

import re

import pytest

from components.private_hooks import ForwardMsg
from harness.browser import act_and_measure, chart_input, load_page
from tests.browser.test_heads_scrub_e2e import QUERY as HEADS_QUERY
from tests.browser.test_heads_scrub_e2e import grid_chart
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

SIDE_COLUMN = ("source", "scaling", "mask")  # the side column's widgets' keys, drawn by the view's whole run
# The summary's cells, in the order drawn (the grid's pictures are images; the ring has no fill)
_CELLS_JS = """chart => [...chart.querySelectorAll('g.mark-rect.role-mark path')]
  .filter(cell => cell.hasAttribute('fill')).map(cell => cell.getAttribute('fill'))"""


class Sent:
    """The server's messages of each action: how many elements it drew (sent in full, or by their hash) and the keys of
    the widgets among them."""

    def __init__(self, page) -> None:
        self.frames: list[bytes] = []
        page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: self.frames.append(frame)))

    def during(self, page, action) -> tuple[int, set[str]]:
        self.frames.clear()
        act_and_measure(page, action)  # returns once the run it asked for has settled
        count, keys = 0, set()
        for frame in self.frames:
            if not isinstance(frame, bytes):
                continue
            message = ForwardMsg()
            message.ParseFromString(frame)
            kind = message.WhichOneof("type")
            count += kind in ("delta", "ref_hash")
            if kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                widget = getattr(element, element.WhichOneof("type"))
                if "id" in type(widget).DESCRIPTOR.fields_by_name:  # a widget's id ends with its key
                    keys.add(widget.id.rsplit("-", 1)[-1])
        return count, keys


def button(page, key: str, label: str):
    return page.locator(f".st-key-{key} button:has-text({label!r})")


def press_chart_input(sent: Sent, page, name: str) -> tuple[int, set[str]]:
    """ArrowRight on the chart's own input name: what the run that follows sends."""
    chart_input(page, name).focus()
    return sent.during(page, lambda: chart_input(page, name).press("ArrowRight"))


def assert_runs_alone(side_column_keys: set[str], own_key: str, *presses: set[str]) -> None:
    """The side column's press drew the side column; each of the presses drew the part they rerun (its widget
    own_key among them) and none of the side column's widgets."""
    assert set(SIDE_COLUMN) <= side_column_keys, side_column_keys
    for keys in presses:
        assert own_key in keys and not set(SIDE_COLUMN) & keys, keys


def expect_in_link(page, **params: str) -> None:
    from playwright.sync_api import expect

    for name, value in params.items():
        expect(page).to_have_url(re.compile(rf"[?&]{name}={value}(&|$)"))


@pytest.mark.own_tab  # it listens to the tab's websocket
def test_the_grids_own_controls_rerun_the_grid_alone_and_the_page_follows(page, base_url):
    from playwright.sync_api import expect

    sent = Sent(page)
    load_page(page, f"{base_url}/{HEADS_QUERY}", drawn=lambda page: grid_chart(page).locator("image").first)
    overview = page.locator('[data-testid="stVegaLiteChart"]').nth(1).inner_html()

    mask, mask_keys = sent.during(page, lambda: button(page, "mask", "causal").click())
    cells = grid_chart(page).evaluate(_CELLS_JS)
    aggregate, aggregate_keys = sent.during(page, lambda: button(page, "aggregate", "max").click())
    layer, layer_keys = press_chart_input(sent, page, "layer")

    print(f"\nall heads: elements a run sends: the side column's mask {mask}, the grid's aggregate {aggregate}, "
          f"the grid's layer {layer}")
    assert_runs_alone(mask_keys, "aggregate", aggregate_keys, layer_keys)
    assert 0 < aggregate < mask / 2 and 0 < layer < mask / 2, "the overview and the parks were sent again"
    # What the presses changed is on the page: the summary's cells, the link, the heading
    assert grid_chart(page).evaluate(_CELLS_JS) != cells, "the summary did not take the max"
    expect_in_link(page, aggregate="max", layer="1", mask="causal")  # the side column's press kept too
    expect(page.get_by_role("heading", name="Every head of layer 1", exact=True)).to_be_visible()
    expect(button(page, "aggregate", "max")).to_have_attribute("aria-checked", "true")
    assert page.locator('[data-testid="stVegaLiteChart"]').nth(1).inner_html() != overview, (
        "the overview under the causal mask should differ from its first drawing")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


@pytest.mark.own_tab  # it opens the one-head view from the grid
def test_a_click_on_a_head_from_the_grids_own_run_still_opens_the_one_head_view(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/{HEADS_QUERY}", drawn=lambda page: grid_chart(page).locator("image").first)
    act_and_measure(page, lambda: button(page, "aggregate", "max").click())
    # A head's picture, clicked: the view's radio in the sidebar is outside the grid's fragment, so the whole page runs
    picture = grid_chart(page).locator('image:not([width="0"])').nth(3)
    act_and_measure(page, lambda: picture.click())
    expect(page.get_by_role("heading", name="Layer 0, head 3", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]head=3(&|$)"))
    expect(page.locator(".st-key-view").get_by_role("radio", name="One head")).to_be_checked()
