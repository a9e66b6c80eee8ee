"""The one-head view in Chromium: Streamlit's chart toolbar leaves the row of stage buttons free.

The toolbar (show data, PNG, the spec, fullscreen) shows while the pointer is over the chart and hangs over
the strip above it, at the chart's right end: over the Lines button when the chart was narrower than the row.
"""

from __future__ import annotations

import pytest

from components.views.head import STAGES
from harness.browser import act_and_measure, load_page
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

VIEWPORT = {"width": 1366, "height": 768}  # a laptop: the 7-token heatmap is narrower than its column
STAGE_BUTTONS = ".st-key-head_stage button"
TOOLBAR_BUTTONS = ("Show data", "Download as PNG", "Copy Vega-Lite spec", "Fullscreen")


def resting_box(page, locator) -> dict:
    """The element's box once it has stopped moving: the toolbar slides into place as it appears."""
    box, before = locator.bounding_box(), None
    while box != before:
        page.wait_for_timeout(250)
        box, before = locator.bounding_box(), box
    return box


def overlap(one: dict, other: dict) -> bool:
    """Whether two bounding boxes share any area."""
    return (one["x"] < other["x"] + other["width"] and other["x"] < one["x"] + one["width"]
            and one["y"] < other["y"] + other["height"] and other["y"] < one["y"] + one["height"])


@pytest.mark.parametrize("stage", ["Weights", "Lines"])
def test_pointing_at_the_chart_leaves_every_stage_button_clickable(page, base_url, stage):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?layer=2&head=5")
    if stage != "Weights":
        act_and_measure(page, page.locator(STAGE_BUTTONS).filter(has_text=stage).click)
    chart = page.locator(f".st-key-chart-{stage.lower()} [data-testid='stVegaLiteChart']")
    chart.hover()
    toolbar = page.locator(f".st-key-chart-{stage.lower()} [data-testid='stElementToolbar']")
    expect(toolbar).to_be_visible()
    for label in TOOLBAR_BUTTONS:
        expect(toolbar.get_by_role("button", name=label)).to_be_visible()
    buttons = page.locator(STAGE_BUTTONS)
    assert buttons.count() == len(STAGES)
    covering = resting_box(page, toolbar)
    covered = [buttons.nth(i).inner_text() for i in range(len(STAGES))
               if overlap(buttons.nth(i).bounding_box(), covering)]
    assert not covered, f"the chart's toolbar lies over {covered}"
