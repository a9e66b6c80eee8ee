"""The all-heads view in a real Chromium: the layer picked on the grid's own input, in the browser.

The grid of heads and the heads summed up are one chart whose dataset holds every layer of a short text
(components/views/heads.py): an arrow key on the Layer input above the grid swaps the pictures and the
summary at once, and the chart's selection then reruns the page, which brings the heading and the URL up
to it. What the chart shows is read off its SVG: the pictures' data URLs and the summary's cell colours.
"""

from __future__ import annotations

import re

from components.page.chart_keys import BURST_MS
from harness.browser import (
    HeldReplies,
    act_and_measure,
    chart_input,
    chart_input_readout,
    load_page,
    messages_sent,
    open_tab,
    readout_selector,
    wait_for_change,
    wait_until_settled,
)
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
VIEWPORT = {"width": 1400, "height": 1400}  # tall: the grid and the summary fit

TEXT = "the quick brown fox jumps over the lazy dog"  # 11 tokens with [CLS] and [SEP]
QUERY = "?view=heads&text=" + TEXT.replace(" ", "+")
LAYERS = 6  # the bundled model's
SHOWN_PICTURES = 'image:not([width="0"])'  # the grid's pictures of the layer shown

# The grid's pictures shown (their data URLs) and the summary's cells (their colours), in the order drawn; not the
# ring round the side column's head in the grid, a rect with no fill.
# Every layer's pictures are in the chart: those of the layers not shown are 0 px wide.
_SHOWN_JS = """chart => ({
  pictures: [...chart.querySelectorAll('g.mark-image image')].filter(image => +image.getAttribute('width') > 0)
    .map(image => image.getAttribute('href')),
  cells: [...chart.querySelectorAll('g.mark-rect.role-mark path')].filter(cell => cell.hasAttribute('fill'))
    .map(cell => cell.getAttribute('fill')),
})"""


def grid_chart(page):
    return page.locator('[data-testid="stVegaLiteChart"]').first


def shown(page) -> dict[str, list[str]]:
    grid_chart(page).locator(SHOWN_PICTURES).first.wait_for()
    return grid_chart(page).evaluate(_SHOWN_JS)


def expect_page_at(page, layer: int) -> None:
    """The rest of the page has followed the chart: the URL and the heading."""
    from playwright.sync_api import expect

    expect(page).to_have_url(re.compile(rf"[?&]layer={layer}(&|$)" if layer else r"^(?!.*[?&]layer=)"))
    expect(page.get_by_role("heading", name=f"Every head of layer {layer}", exact=True)).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_layer_key_press_swaps_the_grid_and_the_summary_before_the_server_answers(page, base_url):
    from playwright.sync_api import expect

    replies = HeldReplies.on(page)
    load_page(page, f"{base_url}/{QUERY}")
    before = shown(page)
    assert len(before["pictures"]) == 12 and len(before["cells"]) == 11 * 11
    overview = page.locator('[data-testid="stVegaLiteChart"]').nth(1).inner_html()

    layer = replies.press(page, "layer")
    after, seconds = wait_for_change(lambda: shown(page), before)
    print(f"\ngrid and summary repainted {seconds * 1000:.0f} ms after the key press (server held back)")
    assert after["pictures"] != before["pictures"], "the grid waited for the server"
    assert all(a != b for a, b in zip(after["pictures"], before["pictures"], strict=True)), "every head is layer 1's"
    assert after["cells"] != before["cells"], "the summary waited for the server"
    assert replies.wait_until_held(page), "the move asked the server for no rerun"
    expect(page.get_by_role("heading", name="Every head of layer 0", exact=True)).to_be_visible()

    replies.release()
    wait_until_settled(page)
    expect_page_at(page, 1)
    expect(layer).to_have_value("1")
    assert shown(page) == after, "the rerun that followed changed the chart"
    assert page.locator('[data-testid="stVegaLiteChart"]').nth(1).inner_html() == overview, "the overview moved"


def test_arrow_keys_step_through_every_layer_and_the_url_follows(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/{QUERY}")
    seen = [shown(page)]
    layer = chart_input(page, "layer")
    for shown_layer in range(1, LAYERS):
        layer.focus()
        act_and_measure(page, lambda: layer.press("ArrowRight"))  # returns once the rerun it asked for settled
        expect(layer).to_have_value(str(shown_layer))
        expect(chart_input_readout(page, "layer")).to_have_text(str(shown_layer))
        seen.append(shown(page))
        expect_page_at(page, shown_layer)
    assert len({tuple(s["pictures"]) for s in seen}) == LAYERS, "every layer has pictures of its own"
    assert len({tuple(s["cells"]) for s in seen}) == LAYERS, "every layer has a summary of its own"

    for shown_layer in range(LAYERS - 2, -1, -1):  # and back: the pictures of each layer again
        layer.focus()
        act_and_measure(page, lambda: layer.press("ArrowLeft"))
        assert shown(page) == seen[shown_layer]
    expect_page_at(page, 0)


def test_a_click_on_a_head_opens_it_at_the_layer_picked_on_the_chart(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/{QUERY}&layer=2")
    expect(chart_input(page, "layer")).to_have_value("2")
    layer = chart_input(page, "layer")
    layer.focus()
    act_and_measure(page, lambda: layer.press("ArrowRight"))
    head_five = grid_chart(page).locator(SHOWN_PICTURES).nth(5)
    box = head_five.bounding_box()
    act_and_measure(page, lambda: page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2))

    expect(page.get_by_role("radio", name="One head")).to_be_checked()
    expect(page.get_by_role("heading", name="Layer 3, head 5", exact=True)).to_be_visible()
    expect(chart_input(page, "layer")).to_have_value("3")
    expect(chart_input(page, "head")).to_have_value("5")


def test_a_key_on_the_layer_input_asks_for_its_rerun_at_once_not_after_streamlits_pause(browser, base_url):
    """Streamlit holds a chart's selection changed by a key in an input until no change has come for a while (a drag's
    pause) before it sends it; the page's listener (components/page/chart_keys.js) tells it the key was the reader's,
    like a click, and it is sent at once. The page's clock is stopped, then moved on by less than that pause: what
    is sent was not waiting for it. A window of its own: a clock is its window's."""
    page = open_tab(browser, viewport=VIEWPORT)
    try:
        page.clock.install()
        load_page(page, f"{base_url}/{QUERY}")
        page.clock.pause_at(page.evaluate("() => Date.now()") + 1_000)
        sent = messages_sent(page)
        layer = chart_input(page, "layer")
        layer.focus()
        layer.press("ArrowRight")
        page.clock.run_for(BURST_MS // 3)  # the page's own short timers (Vega's, Streamlit's), not the pause
        now, _ = wait_for_change(lambda: messages_sent(page), sent, timeout_s=5)
        assert now > sent, "the selection waited for a timer of the page's"
        page.clock.resume()
        wait_until_settled(page)
        expect_page_at(page, 1)
    finally:
        page.context.close()


# Every text the layer input's readout takes from now on, read at each change under the chart (a chart embedded
# anew replaces its inputs, and its readout with them).
_RECORD_READOUTS_JS = """([chart, selector]) => {
  window.__readouts = [];
  new MutationObserver(() => {
    const readout = chart.querySelector(selector);
    window.__readouts.push(readout ? readout.textContent : null);
  }).observe(chart, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def test_a_late_answer_to_a_bursts_first_key_leaves_the_chart_where_the_last_key_took_it(page, base_url):
    """Three keys in a burst: the first asks for its rerun at once (components/page/chart_keys.js), the others are
    sent after Streamlit's pause. The first's answer, held until the browser has drawn the third key, must not take
    the chart back: the readout never leaves 3, and the pictures stay layer 3's."""
    from playwright.sync_api import expect

    replies = HeldReplies.on(page)
    load_page(page, f"{base_url}/{QUERY}")
    layer = replies.press(page, "layer")
    assert replies.wait_until_held(page), "the burst's first key asked for no rerun at once"
    layer.press("ArrowRight")
    layer.press("ArrowRight")
    readout = chart_input_readout(page, "layer")
    expect(readout).to_have_text("3")
    drawn = shown(page)
    grid_chart(page).evaluate(f"chart => ({_RECORD_READOUTS_JS})([chart, {readout_selector('layer')!r}])")

    replies.release()
    wait_until_settled(page)
    expect_page_at(page, 3)
    assert set(page.evaluate("() => window.__readouts")) <= {"3"}, "an answer took the chart back"
    assert shown(page) == drawn, "the answers changed what the browser drew"
