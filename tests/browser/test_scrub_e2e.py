"""The one-head view's heatmap in a real Chromium: its own layer and head inputs, by key, by mouse, by link.

Every head of a short text is in the browser (components/charts/scrub.py): an arrow key or a drag on the
inputs above the chart repaints it at once, and then the chart's selection reruns the page, which
brings the URL, the heading and the side column up to it. What the heatmap shows is read as its
pixels (harness.browser.chart_pixels: the canvas as a data URL), so two heads differ when their
pictures do.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from harness.browser import (
    HeldReplies,
    act_and_measure,
    chart_input,
    chart_input_point,
    chart_input_readout,
    chart_pixels,
    load_page,
    press_chart_key,
    wait_for_change,
    wait_until_settled,
)
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

TEXT = "the quick brown fox jumps over the lazy dog near the river"  # 14 tokens with [CLS] and [SEP]
QUERY = "?text=" + TEXT.replace(" ", "+")
HEADS = 12  # the bundled model's
DRAG_STEPS = 33  # mouse moves from head 0 to head 11: about three per head


def open_page(page, base_url: str, query: str) -> None:
    """Load the page and wait until the weights heatmap is drawn and nothing moves any more."""
    load_page(page, f"{base_url}/{query}")


def url_params(page) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlsplit(page.url).query).items()}


def expect_page_at(page, layer: int, head: int) -> None:
    """The rest of the page has followed the chart: the URL and the heading."""
    from playwright.sync_api import expect

    expect(page).to_have_url(re.compile(rf"[?&]head={head}(&|$)" if head else r"^(?!.*[?&]head=)"))
    assert url_params(page).get("layer", "0") == str(layer), page.url  # layer 0, the default, leaves the URL
    expect(page.get_by_role("heading", name=f"Layer {layer}, head {head}", exact=True)).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_arrow_keys_step_through_every_head(page, base_url):
    from playwright.sync_api import expect

    open_page(page, base_url, QUERY)
    head = chart_input(page, "head")
    expect(head).to_have_value("0")
    pictures = [chart_pixels(page)]

    for shown in range(1, HEADS):
        press_chart_key(page, "head", "ArrowRight")  # returns once the rerun it asked for has settled
        expect(head).to_have_value(str(shown))
        expect(chart_input_readout(page, "head")).to_have_text(str(shown))
        pictures.append(chart_pixels(page))
        assert pictures[-1] != pictures[-2], f"the heatmap did not change for head {shown}"
        expect_page_at(page, 0, shown)

    assert len(set(pictures)) == HEADS, "every head should have a picture of its own"
    expect(chart_input(page, "layer")).to_have_value("0")


def test_a_move_repaints_before_the_server_answers(page, base_url):
    from playwright.sync_api import expect

    replies = HeldReplies.on(page)
    open_page(page, base_url, QUERY)
    before = chart_pixels(page)

    head = replies.press(page, "head")
    assert wait_for_change(lambda: chart_pixels(page), before)[0] != before, "the heatmap waited for the server"
    # The chart's selection went to the server, which answered; the page has not seen that answer yet.
    assert replies.wait_until_held(page), "the move asked the server for no rerun"
    expect(page.get_by_role("heading", name="Layer 0, head 0", exact=True)).to_be_visible()
    assert "head=" not in page.url

    replies.release()
    wait_until_settled(page)
    expect_page_at(page, 0, 1)
    expect(head).to_have_value("1")


def test_dragging_the_head_input_draws_the_heads_on_the_way(page, base_url):
    from playwright.sync_api import expect

    open_page(page, base_url, QUERY)
    (start_x, y), (end_x, _) = chart_input_point(page, "head", 0), chart_input_point(page, "head", HEADS - 1)
    pictures = [chart_pixels(page)]

    page.mouse.move(start_x, y)
    page.mouse.down()
    for step in range(1, DRAG_STEPS + 1):
        page.mouse.move(start_x + (end_x - start_x) * step / DRAG_STEPS, y)
        pictures.append(chart_pixels(page))  # sampled while the button is down
    dragged_to = chart_input(page, "head").input_value()
    act_and_measure(page, page.mouse.up)

    assert len(set(pictures)) > 2, "no head between the first and the last was drawn during the drag"
    assert dragged_to == str(HEADS - 1)
    expect(chart_input(page, "head")).to_have_value(str(HEADS - 1))
    expect_page_at(page, 0, HEADS - 1)
    assert chart_pixels(page) == pictures[-1], "the reruns after the drag changed the picture"


def test_the_layer_input_moves_the_layer(page, base_url):
    from playwright.sync_api import expect

    open_page(page, base_url, QUERY)
    before = chart_pixels(page)

    press_chart_key(page, "layer", "ArrowRight")

    expect(chart_input(page, "layer")).to_have_value("1")
    expect(chart_input(page, "head")).to_have_value("0")
    assert chart_pixels(page) != before, "the heatmap did not change for layer 1"
    expect(page).to_have_url(re.compile(r"[?&]layer=1(&|$)"))
    expect_page_at(page, 1, 0)


def test_a_link_opens_the_inputs_at_its_layer_and_head(page, base_url):
    from playwright.sync_api import expect

    open_page(page, base_url, QUERY + "&layer=3&head=7")

    for name, value in (("layer", "3"), ("head", "7")):
        expect(chart_input(page, name)).to_have_value(value)
        expect(chart_input_readout(page, name)).to_have_text(value)
    expect_page_at(page, 3, 7)
    assert page.locator('[data-testid="stAlert"]').count() == 0
