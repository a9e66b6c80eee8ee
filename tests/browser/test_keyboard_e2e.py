"""The one-head view's main path by the keyboard alone, in Chromium: Tab from the top of the page to the text, type
a sentence and send it (Ctrl+Enter), Tab on to the chart's own Layer and Head inputs, and move them with the arrow
keys. Every stop on the way shows that it has the focus: its outline, border or shadow differs from its look
without it. No mouse, no element focused by the test: only key presses.

The page is asked for reduced motion, as a learner's system may ask it: the page then has no transitions
(components/page/page_head.css), which a second test checks."""

from __future__ import annotations

import re

import pytest

from harness.browser import chart_input_readout, load_page, wait_until_settled
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

MOST_TABS = 60  # Tab presses to reach any one stop: the sidebar's controls, then the view's, come before the chart

# After a Tab: the stop the focus left, and whether the look of it or of a box around it (Streamlit marks a text
# box's focus on the box's border, from the component's own state) changed as the focus left, two frames on; and the
# stop the focus is on now, whose look is kept for the next call.
_TABBED_JS = """async () => {
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const look = element => {
        const boxes = [element];
        for (let up = element.parentElement; up && boxes.length < 5; up = up.parentElement) boxes.push(up);
        return boxes.map(box => { const style = getComputedStyle(box);
            return [style.outlineStyle, style.outlineWidth, style.outlineColor, style.boxShadow, style.borderColor,
                    style.opacity].join(' '); }).join('|');
    };
    const stop = window.focusStop;
    const left = stop && stop.element.isConnected ? {label: stop.label, seen: look(stop.element) !== stop.look} : null;
    const element = document.activeElement;
    if (!element || element === document.body) { window.focusStop = null; return {left, now: null}; }
    const now = {tag: element.tagName, name: element.getAttribute('name') || '',
                 label: element.getAttribute('aria-label') || element.closest('[data-testid]')?.dataset.testid || ''};
    window.focusStop = {element, look: look(element), label: `${now.tag} ${now.label} ${now.name}`.trim()};
    return {left, now};
}"""


def tab_to(page, wanted, unseen: list[str]) -> dict:
    """Press Tab until wanted(focused) holds; each stop left whose focus could not be seen goes into unseen."""
    for _ in range(MOST_TABS):
        page.keyboard.press("Tab")
        tabbed = page.evaluate(_TABBED_JS)
        if tabbed["left"] is not None and not tabbed["left"]["seen"]:
            unseen.append(tabbed["left"]["label"])
        if tabbed["now"] is not None and wanted(tabbed["now"]):
            return tabbed["now"]
    raise AssertionError(f"not reached in {MOST_TABS} presses of Tab")


@pytest.mark.own_tab  # asks for reduced motion
def test_the_one_head_views_main_path_by_keyboard_alone(page, base_url):
    from playwright.sync_api import expect

    page.emulate_media(reduced_motion="reduce")
    load_page(page, f"{base_url}/?view=head")
    unseen = []
    tab_to(page, lambda focused: focused["tag"] == "TEXTAREA", unseen)
    page.keyboard.press("Control+A")
    page.keyboard.type("the keyboard alone moves the head")
    page.keyboard.press("Control+Enter")
    expect(page).to_have_url(re.compile(r"text=the\+keyboard\+alone"))
    wait_until_settled(page)

    tab_to(page, lambda focused: focused["tag"] == "INPUT" and focused["name"].startswith("layer"), unseen)
    page.keyboard.press("ArrowRight")
    expect(chart_input_readout(page, "layer")).to_have_text("1")
    tab_to(page, lambda focused: focused["tag"] == "INPUT" and focused["name"].startswith("head"), unseen)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(chart_input_readout(page, "head")).to_have_text("2")
    expect(page.get_by_role("heading", name="Layer 1, head 2")).to_be_visible()
    expect(page.locator(".aa-chart-text")).to_contain_text("layer 1, head 2")
    assert not unseen, f"stops whose focus cannot be seen: {unseen}"


@pytest.mark.own_tab  # asks for reduced motion
def test_a_request_for_reduced_motion_turns_the_pages_transitions_off(page, base_url):
    load_page(page, f"{base_url}/?view=head")
    box = page.locator('[data-testid="stTextInputRootElement"]').first
    duration = "el => getComputedStyle(el).transitionDuration"
    assert box.evaluate(duration) not in ("0s", ""), "Streamlit's text box eases its border in, as a rule"
    page.emulate_media(reduced_motion="reduce")
    assert set(box.evaluate(duration).split(", ")) == {"0s"}
