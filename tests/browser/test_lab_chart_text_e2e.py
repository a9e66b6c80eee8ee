"""The labs' text alternatives in Chromium: in the accessibility tree (a screen reader reads them), drawn nowhere (a box
of 1 px at most), and following a move of a chart's own input by the keyboard: the scaling lab's τ, the counting
lab's window."""

from __future__ import annotations

from components.charts.counting_maps import WIN
from components.private_hooks import bound_input_name
from harness.browser import chart_input, chart_input_readout, load_page
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

OPEN_TIMEOUT_MS = 180_000  # the first lab of a server loads the model, measures softmax at every τ, draws every window
SIZE_JS = """p => { const box = p.closest('[data-testid="stElementContainer"]').getBoundingClientRect();
  return [box.width, box.height]; }"""


def assert_read_not_drawn(page, said, count: int) -> None:
    from playwright.sync_api import expect

    expect(said).to_have_count(count)
    for index in range(count):
        width, height = said.nth(index).evaluate(SIZE_JS)
        assert width <= 1 and height <= 1, f"text {index} is drawn {width} × {height} px"
        assert said.nth(index).get_attribute("aria-live") == "polite"
    snapshot = page.locator('[data-testid="stMain"]').aria_snapshot()
    assert said.first.text_content()[:40] in snapshot, "a screen reader finds it"


def test_the_scaling_labs_texts_are_read_not_drawn_and_follow_tau(page, base_url):
    from playwright.sync_api import expect

    page.set_default_timeout(OPEN_TIMEOUT_MS)
    load_page(page, f"{base_url}/?view=lab",
              drawn=lambda tab: tab.locator(".st-key-chart-random-softmax svg.marks"))
    said = page.locator(".aa-chart-text")
    assert_read_not_drawn(page, said, 4)
    random = said.filter(has_text="Softmax over 7 random keys")
    expect(random).to_contain_text("with τ = 1, from ")
    tau = chart_input(page, "temperature")
    tau.focus()
    for _ in range(5):
        tau.press("ArrowRight")
    expect(chart_input_readout(page, "temperature")).to_have_text("1.25")
    expect(random).to_contain_text("with τ = 1.25, from ")
    expect(said.filter(has_text="The trained heads")).to_contain_text("with τ = 1.25")


def test_the_counting_maps_text_is_read_not_drawn_and_follows_the_window(page, base_url):
    from playwright.sync_api import expect

    page.set_default_timeout(OPEN_TIMEOUT_MS)
    maps = f'[data-testid="stVegaLiteChart"]:has(input[name="{bound_input_name(WIN)}"]) canvas'
    load_page(page, f"{base_url}/?view=counting", drawn=lambda tab: tab.locator(maps).first)
    said = page.locator(".aa-chart-text")
    assert_read_not_drawn(page, said, 1)
    expect(said).to_contain_text("The counting maps, window size 10.")
    window = chart_input(page, WIN)
    window.focus()
    window.press("ArrowRight")
    expect(chart_input_readout(page, WIN)).to_have_text("11")
    expect(said).to_contain_text("The counting maps, window size 11.")
