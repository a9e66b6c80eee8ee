"""A long text's heatmap in a real Chromium: pointing at the picture says how to zoom, a dragged rectangle is drawn
in cells under it, and pointing at one of those names its two tokens and its weight.

At about 480 tokens the picture's tooltip showed its own fields (x 0, y 0, x2 483, a data URL) instead.
"""

from __future__ import annotations

import re

from harness.browser import wait_until_settled
from tests.marks import BROWSER_TESTS
from tests.page.test_zoom import TEXT

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 1366, "height": 768}


def tooltip(page) -> str:
    found = page.locator("#vg-tooltip-element")
    found.wait_for(state="visible")
    return found.inner_text()


def test_a_dragged_rectangle_of_a_long_text_is_drawn_in_cells_that_name_their_tokens(page, base_url):
    from playwright.sync_api import expect

    page.goto(f"{base_url}/?text={TEXT.strip().replace(' ', '+')}")
    picture = page.locator('[data-testid="stVegaLiteChart"]').first.locator("canvas")
    picture.wait_for()
    wait_until_settled(page)
    box = picture.bounding_box()
    middle = box["x"] + box["width"] * 0.55, box["y"] + box["height"] * 0.45
    page.mouse.move(*middle)
    assert "Drag a rectangle" in tooltip(page), "the picture says how to see its cells, not its own fields"
    assert "data:image" not in tooltip(page)

    page.mouse.down()
    page.mouse.move(middle[0] + 40, middle[1] + 40, steps=6)
    page.mouse.up()
    zoomed = page.locator('[data-testid="stVegaLiteChart"][aria-label*="zoomed"]')
    expect(zoomed).to_have_count(1)
    wait_until_settled(page)
    zoomed.scroll_into_view_if_needed()
    cells = zoomed.locator("canvas, svg.marks").first.bounding_box()
    page.mouse.move(cells["x"] + cells["width"] * 0.6, cells["y"] + cells["height"] * 0.4)
    shown = tooltip(page)
    assert re.search(r"query token\s+\d+ \S+", shown) and re.search(r"key token\s+\d+ \S+", shown), shown
    assert re.search(r"\d\.\d{4}", shown), "and its weight"
