"""Meaning never rides on colour alone, in a real Chromium: a head switched off in the switch view shows by a cross
and a dashed edge besides its grey (components/views/parts/head_toggles.css), which a reader who cannot tell the
grey from white still reads."""

from __future__ import annotations

from harness.browser import act_and_measure, wait_until_settled
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

_TOGGLES = ".st-key-switch_heads button"
_SHAPE = """button => ({cross: getComputedStyle(button, '::before').content,
  edge: getComputedStyle(button).borderTopStyle})"""


def test_a_head_switched_off_shows_a_cross_and_a_dashed_edge_and_one_on_neither(page, base_url):
    page.goto(f"{base_url}/?view=switch")
    page.locator(_TOGGLES).first.wait_for()
    wait_until_settled(page)
    off = page.locator(f"{_TOGGLES}[data-layer='2'][data-head='7']")
    act_and_measure(page, off.click)
    assert off.get_attribute("aria-pressed") == "true"
    shape_off = off.evaluate(_SHAPE)
    shape_on = page.locator(f"{_TOGGLES}[data-layer='2'][data-head='8']").evaluate(_SHAPE)
    assert shape_off == {"cross": '"✕"', "edge": "dashed"}, shape_off
    assert shape_on["cross"] in ("none", "normal") and shape_on["edge"] == "solid", shape_on
