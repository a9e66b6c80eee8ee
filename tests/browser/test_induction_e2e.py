"""The induction lab in a real Chromium: train a small configuration from its link, watch it train, then scrub
through the kept steps with the maps' own Step input, which the browser redraws by itself (nothing is sent to
the server). What the maps show is read as their canvas's pixels (harness.browser.chart_pixels)."""

from __future__ import annotations

import re

from components.charts.induction import STEP
from components.private_hooks import bound_input_name
from harness.browser import chart_pixels, load_page, messages_sent, wait_for_change, wait_until_settled
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

# Small: 100 steps of one head a layer on 8 tokens, a few seconds; maps kept every 5 steps.
QUERY = "?view=induction&steps=100&heads=1&vocab=8&periods=2-6&seed=21"
KEEP_EVERY = 5


def maps(page):
    return page.locator('[data-testid="stVegaLiteChart"][aria-label^="Every head\'s attention"]').first


def step_input(page):
    return maps(page).locator(f'.vega-bindings input[type="range"][name="{bound_input_name(STEP)}"]')


def train_button(page):
    """The Train button (with its help, a finished run's, Streamlit draws the button twice: one of them hidden)."""
    return page.locator(".st-key-induction_train button:visible").first


def trained(page, base_url: str) -> None:
    """Open the link and, unless this server trained its settings already, press Train and watch the progress."""
    from playwright.sync_api import expect

    load_page(page, base_url + "/" + QUERY, drawn=train_button)
    button = train_button(page)
    if button.is_enabled():
        button.click()
        expect(page.locator('[data-testid="stProgress"]').first).to_contain_text("Step", timeout=60_000)
    expect(page.get_by_text("Trained 100 steps in").first).to_be_visible(timeout=120_000)
    wait_until_settled(page)


def test_a_small_run_trains_from_its_link_and_its_steps_are_scrubbed_in_the_browser(page, base_url):
    from playwright.sync_api import expect

    trained(page, base_url)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(train_button(page)).to_be_disabled()
    step = step_input(page)
    expect(step).to_have_value("100")
    assert (step.get_attribute("min"), step.get_attribute("max"), step.get_attribute("step")) == ("0", "100", "5")
    pictures = {100: chart_pixels(page, maps(page))}
    before = messages_sent(page)

    step.focus()
    for value in range(100 - KEEP_EVERY, -1, -KEEP_EVERY):  # down to the untrained heads, a kept step a key
        page.keyboard.press("ArrowLeft")
        expect(step).to_have_value(str(value))
        # Two kept steps may draw alike (a weight moved less than a colour's step): a short wait for a change.
        pictures[value] = wait_for_change(lambda: chart_pixels(page, maps(page)), pictures[value + KEEP_EVERY],
                                          timeout_s=3)[0]

    assert pictures[0] != pictures[100], "the untrained heads look like the trained ones"
    assert pictures[50] != pictures[100]
    assert len(set(pictures.values())) > 10, "most kept steps draw maps of their own"
    assert messages_sent(page) == before, "scrubbing asked the server for something: it must be the browser's alone"

    page.keyboard.press("End")
    expect(step).to_have_value("100")
    assert wait_for_change(lambda: chart_pixels(page, maps(page)), pictures[0])[0] == pictures[100], (
        "back at the last step, the same maps")


def test_a_second_page_with_the_same_link_shows_the_run_at_once(page, base_url, browser):
    """A student following the teacher opens the same settings: nothing is trained again."""
    from playwright.sync_api import expect

    from harness.browser import open_tab

    trained(page, base_url)  # by the test above on this server, or here
    other = open_tab(browser)
    try:
        load_page(other, base_url + "/" + QUERY, drawn=lambda p: maps(p))
        expect(train_button(other)).to_be_disabled()
        expect(other.get_by_text("Trained 100 steps in").first).to_be_visible()
        expect(step_input(other)).to_have_value("100")
        assert chart_pixels(other, maps(other)) == chart_pixels(page, maps(page))
    finally:
        other.context.close()


def test_stop_ends_a_training_where_it_is_and_keeps_what_it_learned(page, base_url):
    from playwright.sync_api import expect

    load_page(page, base_url + "/?view=induction&steps=2000&heads=1&vocab=8&periods=2-6&seed=23",
              drawn=train_button)
    train_button(page).click()
    # Past the first kept step after 0 (every 100 of 2,000), so that the stopped run has steps to scrub.
    expect(page.locator('[data-testid="stProgress"]').first).to_contain_text(re.compile(r"Step [1-9]\d{2,} of"),
                                                                             timeout=120_000)
    page.locator(".st-key-induction_stop button:visible").first.click()
    expect(page.get_by_text("Stopped at step").first).to_be_visible(timeout=60_000)
    wait_until_settled(page)
    expect(train_button(page)).to_be_enabled()  # an unfinished run is this page's, and can be trained again
    expect(step_input(page)).to_be_attached()
    assert int(step_input(page).get_attribute("max")) >= 100
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
