"""The page as a projector and a phone show it: what lies where, read from the elements' boxes in Chromium.

A test that a chart exists says nothing about where it lies: these open pages at the sizes a class uses
(a 1280×720 projector, a 1366×768 laptop, a 390×844 phone) and check the boxes of what they draw. The sweeps that
walk every view and every lesson step have axe audit each page of the laptop's normal mode on the way
(harness/axe.py): one walk, where a walk of its own for the audit cost CI's two workers three minutes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from components.page.lesson_steps import lesson_for
from components.private_hooks import bound_input_name
from harness.axe import drawn_chart_texts, serious_violations
from harness.browser import load_page, open_tab, wait_until_settled, wait_until_sized, weights_chart
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
LESSON_STEPS = len(lesson_for(rotates=False, shares=False))  # the bundled BERT's lesson: no rotary, no shared heads

PROJECTOR, LAPTOP, PHONE = {"width": 1280, "height": 720}, {"width": 1366, "height": 768}, {"width": 390, "height": 844}
LONG_TEXT = "+".join(["the", "river", "bank", "was", "muddy", "after", "rain"] * 6)  # 42 words: 44 tokens


def chips_height(page) -> float:
    return page.locator('[data-testid="token-chips"]').bounding_box()["height"]


def chip_rows(page) -> int:
    """How many rows of chips can be seen: the distinct tops of the chips inside the chips' visible box."""
    return page.locator('[data-testid="token-chips"]').evaluate("""chips => {
        const shown = chips.getBoundingClientRect();
        const tops = [...chips.querySelectorAll('.aa-chip')].map(chip => chip.getBoundingClientRect())
            .filter(box => box.bottom <= shown.bottom + 1).map(box => Math.round(box.top));
        return new Set(tops).size;
    }""")


@pytest.mark.parametrize("viewport", [PROJECTOR, PHONE], ids=["projector", "phone"])
def test_a_long_texts_chips_fold_to_one_row_that_opens(browser, base_url, viewport):
    page = open_tab(browser, viewport=viewport)
    try:
        load_page(page, f"{base_url}/?text={LONG_TEXT}")
        assert page.locator('[data-testid="token-chips"] .aa-chip').count() == 44, "every chip is on the page"
        assert chip_rows(page) == 1
        folded = chips_height(page)

        page.locator('[data-testid="token-fold"] summary').click()
        assert chip_rows(page) > 1
        assert chips_height(page) > folded

        page.locator('[data-testid="token-fold"] summary').click()
        assert chip_rows(page) == 1
    finally:
        page.context.close()


def test_a_short_texts_chips_are_not_folded(page, base_url):
    load_page(page, f"{base_url}/?text=time+flies+like+an+arrow")
    assert page.locator('[data-testid="token-fold"]').count() == 0
    assert page.locator('[data-testid="token-chips"] .aa-chip').count() == 7


@pytest.mark.parametrize(("view", "shown"), [("head", True), ("neuron", True), ("compare", False)])
def test_the_shapes_panel_shows_where_it_describes_the_view(page, base_url, view, shown):
    page.goto(f"{base_url}/?view={view}")
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for()
    wait_until_settled(page)
    assert page.locator('[data-testid="shapes-panel"]').count() == (1 if shown else 0)
    if shown:  # in an expander, open at first
        assert page.locator('[data-testid="stExpander"]').filter(has_text="Tensor shapes").count() == 1
        assert page.locator('[data-testid="shapes-panel"] li').first.is_visible()


@pytest.mark.parametrize("viewport", [PROJECTOR, LAPTOP], ids=["projector", "laptop"])
def test_the_charts_layer_and_head_inputs_stand_in_one_row(browser, base_url, viewport):
    page = open_tab(browser, viewport=viewport)
    try:
        load_page(page, f"{base_url}/?text=time+flies+like+an+arrow")
        layer, head = (weights_chart(page).locator(f'input[name="{bound_input_name(name)}"]').bounding_box()
                       for name in ("layer", "head"))
        assert abs(layer["y"] - head["y"]) < 2 and head["x"] > layer["x"] + layer["width"]
    finally:
        page.context.close()


# ---- Every view and lesson step at every size: charts inside the main block, and on nothing else ----

SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots" / "layout"  # git-ignored; the README names it
# The screenshots are for a reviewer's eyes and check nothing; taking them costs a fifth of the sweeps' time.
SCREENSHOTS_WANTED = os.environ.get("LAYOUT_SCREENSHOTS") == "1"
# The sizes the page is looked at in: a classroom projector, a laptop, a phone.
SIZES = {"1280x720": PROJECTOR, "1366x768": LAPTOP, "390x844": PHONE}
PAIR = "&text_b=the+bank+raised+its+rates"
PAGES = {
    "head": "?view=head", "heads": "?view=heads", "heads-tokens": "?view=heads&grid_tokens=1" + PAIR,
    "neuron": "?view=neuron", "lab": "?view=lab",
    "compare": "?view=compare" + PAIR, "counting": "?view=counting", "switch": "?view=switch",
    "induction": "?view=induction", "atlas": "?view=atlas", "block": "?view=block",
    # whole words, whose labels ("ophthalmologist") are longer than most tokens'
    "head-words": "?view=head&words=1&text=the+ophthalmologist+examined+photosynthesis",
    "compare-words": "?view=compare&words=1&text=the+ophthalmologist+examined+photosynthesis"
                     "&text_b=an+ophthalmologist+studied+photosynthesis",
}
LESSON = "?view=lesson&step=1" + PAIR  # opened at its first step, then walked to the last with Next, as a learner does
MODES = {"normal": "", "present": "&present=1"}  # presentation mode: larger text and charts, the sidebar closed
# What a chart draws (Vega's canvas or SVG), and what it must not lie on: controls, tables, text, the shapes panel.
GRAPHICS = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg.marks'
OBSTACLES = ", ".join(f'[data-testid="{testid}"]' for testid in (
    "stSlider", "stButtonGroup", "stButton", "stSelectbox", "stNumberInput", "stCheckbox", "stRadio", "stTextArea",
    "stExpander", "stMetric", "stDataFrame", "stTable", "stText", "stAlert", "stHeading", "stCaptionContainer",
    "stMarkdownContainer", "shapes-panel", "token-chips")) + ", .aa-table, .aa-metric"
_LAYOUT_JS = """([graphics, obstacles]) => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect();
    const area = document.querySelector('[data-testid="stMain"]');
    const shown = box => box.width > 1 && box.height > 1;
    const name = element => (element.closest('[data-testid="stVegaLiteChart"]')?.getAttribute('aria-label')
        || element.dataset.testid || element.className || element.tagName).toString().slice(0, 60);
    const charts = [...area.querySelectorAll(graphics)].map(e => [e, e.getBoundingClientRect()])
        .filter(([, b]) => shown(b));
    // Chromium still gives a box to what a closed expander (a <details>) holds, laid out where it would stand open.
    const folded = e => e.closest('details:not([open])') && !e.closest('summary');
    const others = [...area.querySelectorAll(obstacles)]
        .filter(e => !e.closest('[data-testid="stVegaLiteChart"]') && !folded(e))
        .map(e => [e, e.getBoundingClientRect()]).filter(([, b]) => shown(b));
    const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2
        && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2;
    const faults = [];
    charts.forEach(([chart, box], index) => {
        if (box.left < main.left - 1 || box.right > main.right + 1)
            faults.push(`chart ${name(chart)} spans x ${Math.round(box.left)}..${Math.round(box.right)}, `
                        + `past the main block's ${Math.round(main.left)}..${Math.round(main.right)}`);
        charts.slice(index + 1).forEach(([other, otherBox]) => {
            if (overlap(box, otherBox)) faults.push(`chart ${name(chart)} overlaps chart ${name(other)}`);
        });
        others.forEach(([other, otherBox]) => {
            if (overlap(box, otherBox)) faults.push(`chart ${name(chart)} overlaps ${name(other)}`);
        });
    });
    return {faults, charts: charts.length};
}"""


# What a reader cannot see whole or read: a control's options cut at its edge or the main block's (Streamlit
# scrolls a segmented control placed in a column sideways, and on a phone its last options lay past the screen,
# unseen); a formula wider than its box (KaTeX cuts it there; a 2-px overhang is KaTeX's own, and harmless);
# and what KaTeX could not read, which it draws as the source in its error red (#cc0000), such as "\\qquadK".
_UNREADABLE_JS = """() => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect();
    const area = document.querySelector('[data-testid="stMain"]');
    const faults = [];
    area.querySelectorAll('.katex-display').forEach(formula => {
        if (formula.scrollWidth > formula.clientWidth + 4)
            faults.push(`a formula is ${formula.scrollWidth} px wide in ${formula.clientWidth} px: `
                        + JSON.stringify(formula.innerText.replace(/\\s+/g, ' ').slice(0, 40)));
    });
    area.querySelectorAll('.katex-error, .katex .mord.text[style*="rgb(204, 0, 0)"]').forEach(error =>
        faults.push(`KaTeX could not read ${JSON.stringify(error.innerText.slice(0, 40))}`));
    area.querySelectorAll('[data-testid="stButtonGroup"]').forEach(group => {
        const box = group.getBoundingClientRect();
        if (box.width <= 1 || box.height <= 1) return;
        const left = Math.max(box.left, main.left) - 1, right = Math.min(box.right, main.right) + 1;
        const cut = [...group.querySelectorAll('button')].filter(option => {
            const edges = option.getBoundingClientRect();
            return edges.left < left || edges.right > right;
        });
        if (cut.length) faults.push(`options ${cut.map(option => JSON.stringify(option.innerText.trim())).join(', ')}`
                                    + ` run past their control's edge (x ${Math.round(left)}..${Math.round(right)})`);
    });
    return faults;
}"""


def open_drawn(page, url: str) -> None:
    """Open url and wait until the page has reported its size, settled, and Vega has drawn every chart shown."""
    page.goto(url)
    page.locator('[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"]').first.wait_for(
        state="attached")
    wait_until_sized(page)
    wait_until_drawn(page)


def next_lesson_step_drawn(page, step: int) -> None:
    """Press the lesson's Next (the step reruns alone, as a learner walks the lesson) and wait until step is drawn."""
    page.locator(".st-key-lesson_next button").click()
    page.get_by_text(f"Step {step} of {LESSON_STEPS}:").wait_for()
    wait_until_drawn(page)


def wait_until_drawn(page) -> None:
    """Wait until the page has settled and Vega has drawn every chart shown."""
    from playwright.sync_api import expect

    wait_until_settled(page)
    charts = page.locator('[data-testid="stVegaLiteChart"]:visible')
    for index in range(charts.count()):
        expect(charts.nth(index).locator("canvas, svg.marks").first).to_be_attached()
    wait_until_settled(page, quiet_ms=500)


def screens(page, name: str, most: int = 4) -> None:
    """Screenshots of the page as a reader scrolls it, a screen at a time: Streamlit scrolls its main area
    inside the window, so a full-page screenshot would show the first screen only."""
    for index in range(most):
        page.screenshot(path=SCREENSHOTS / f"{name}_{index + 1}.png")
        scrolled = page.evaluate("""() => {
            const main = document.querySelector('[data-testid="stMain"]');
            const before = main.scrollTop;
            main.scrollTop += main.clientHeight - 40;
            return main.scrollTop > before;
        }""")
        if not scrolled:
            break
    page.evaluate("() => { document.querySelector('[data-testid=\"stMain\"]').scrollTop = 0; }")


# Each sweep is at one size, in its own pytest-xdist group that may run beside the others and that starts before the
# shorter tests (tests/conftest.py): the normal page at a laptop's size, presentation mode at a projector's (a class
# does not pass it on to the students' phones: page_state.NOT_FOLLOWED), the phone's at its size. The projector's
# 1280×720 in normal mode too cost the normal sweeps a resize and a second check of every page, a tenth of the suite's
# CPU on CI's 2 cores, for the size presentation mode already checks with larger letters.
SWEEP_SIZES = {("desktop", "normal"): "1366x768", ("desktop", "present"): "1280x720", ("phone", "normal"): "390x844"}
SWEEPS = [pytest.param(size, mode, part, id=f"{screen}-{mode}-{part}",
                       marks=[pytest.mark.xdist_group(f"layout-{screen}-{mode}-{part}"), pytest.mark.long])
          for (screen, mode), size in SWEEP_SIZES.items() for part in ("views", "lesson")]


@pytest.mark.parametrize(("size", "mode", "part"), SWEEPS)
def test_every_view_keeps_its_layout_and_has_no_serious_axe_violation(browser, base_url, size, mode, part):
    """Charts inside the main block and on nothing else; every option of every control whole; every formula
    whole and read by KaTeX; at one size, in one mode: every view, or every step of the lesson, walked with
    Next as a learner does. On a desktop, no chart's text alternative drawn (they are read, not seen); in normal
    mode, no serious or critical violation of WCAG A or AA that axe finds."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = open_tab(browser, viewport=SIZES[size])
    faults = []

    def check(name: str) -> None:
        found = page.evaluate(_LAYOUT_JS, [GRAPHICS, OBSTACLES])
        if page.locator('[data-testid="stException"]').count():
            faults.append(f"{name} at {size}: a traceback is shown")
        if not page.locator(GRAPHICS).count():
            faults.append(f"{name} at {size}: no chart is drawn")
        if SCREENSHOTS_WANTED:
            screens(page, f"{name}_{size}{'' if mode == 'normal' else '_' + mode}")
        faults.extend(f"{name} at {size}: {fault}" for fault in [*found["faults"], *page.evaluate(_UNREADABLE_JS)])
        if size != "390x844":
            # Presentation mode's letters are larger and its captions darker (page_head_presented.css), on the same
            # elements: the normal sweep's audit is the stricter one (9 s of each sweep's 40).
            if mode == "normal":
                faults.extend(serious_violations(page, f"{name}, axe"))
            faults.extend(drawn_chart_texts(page, f"{name}, {mode}"))

    try:
        if part == "views":
            for name, query in PAGES.items():
                open_drawn(page, f"{base_url}/{query}{MODES[mode]}")
                check(name)
        else:
            open_drawn(page, f"{base_url}/{LESSON}{MODES[mode]}")
            check("lesson-1")
            for step in range(2, LESSON_STEPS + 1):
                next_lesson_step_drawn(page, step)
                check(f"lesson-{step}")
    finally:
        page.context.close()
    assert not faults, "\n".join(faults)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("viewport", [PROJECTOR, LAPTOP], ids=["projector", "laptop"])
def test_a_15_token_heatmap_is_three_quarters_on_the_first_screen(browser, base_url, viewport, mode):
    page = open_tab(browser, viewport=viewport)
    try:
        load_page(page, f"{base_url}/?text=the+bank+of+the+river+was+muddy+after+the+rain+and+the+fish{MODES[mode]}")
        assert page.locator('[data-testid="token-chips"] .aa-chip').count() == 15
        box = weights_chart(page).locator("canvas").bounding_box()
        seen = max(0.0, min(box["y"] + box["height"], viewport["height"]) - max(box["y"], 0.0))
        assert seen / box["height"] >= 0.75, f"{seen / box['height']:.0%} of the heatmap on the first screen ({box})"
    finally:
        page.context.close()


def svg_text_sizes(page) -> list[float]:
    """The px of every written text of the page's SVG charts, once they have some."""
    page.locator('[data-testid="stVegaLiteChart"] svg text').first.wait_for(state="attached")
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg text')]
        .filter(text => text.textContent.trim()).map(text => parseFloat(getComputedStyle(text).fontSize))""")


def test_presentation_mode_draws_every_text_of_a_chart_at_14_px_or_more(browser, base_url):
    """What the page asks of Vega (tests/page/test_presentation.py) is what Chromium draws: the heads view's charts are
    SVG, whose text elements say their size, and Streamlit's theme, merged into every chart, must not undo it."""
    page = open_tab(browser, viewport=PROJECTOR)
    try:
        open_drawn(page, f"{base_url}/?view=heads&present=1")
        sizes = svg_text_sizes(page)
        assert sizes and min(sizes) >= 14, sorted(set(sizes))
        open_drawn(page, f"{base_url}/?view=heads")
        assert min(svg_text_sizes(page)) < 14, "without it, the theme's smaller labels: the check can tell them apart"
    finally:
        page.context.close()
