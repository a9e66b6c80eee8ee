"""A student breaks away from the teacher with quick arrow keys on the chart's own input.

The teacher stands at layer 2, head 2; a student following presses Right three times, 0.15 s apart, on the
chart's Head input (the one-head view) or its Layer input (the all-heads view). The first press leaves follow
mode while the others are still under way. Once the page has settled, what the chart shows (its input, the
number beside it and its pixels, compared with those of a page opened at that head on its own) must be what
its heading and its link say. The cause was the chart's place in the page: the follower's line above it grew from
one element to two, and the browser mounted the chart anew at the position the page had left. A notice above the
chart that goes at the first move (a link's head out of range) did the same outside a class.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from harness.browser import (
    chart_input,
    chart_input_readout,
    chart_pixels,
    expect_head,
    load_page,
    move_head_to,
    open_tab,
    wait_until_settled,
)
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

TEXT = "the student leaves the class with three quick presses"
SCREEN = {"width": 1400, "height": 1000}
PRESSES, GAP_MS = 3, 150
START = 2  # the teacher's layer and head
AFTER_POLLS_MS = 2_000  # more than two of the class's polls (components/classroom/classroom.POLL_S)

# The all-heads grid as it shows one layer: the data URLs of its pictures shown (those of other layers are 0 px).
_GRID_JS = """chart => [...chart.querySelectorAll('g.mark-image image')]
  .filter(image => +image.getAttribute('width') > 0).map(image => image.getAttribute('href')).join(' ')"""
# For each view: the input the student presses, the heading of a position, and what its chart shows.
VIEWS = {
    "head": ("head", lambda n: f"Layer {START}, head {n}", chart_pixels),
    "heads": ("layer", lambda n: f"Every head of layer {n}",
              lambda page: page.locator('[data-testid="stVegaLiteChart"]').first.evaluate(_GRID_JS)),
}


def url_params(page) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlsplit(page.url).query).items()}


def drawn(page):
    return page.locator('[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg.marks').first


@pytest.mark.parametrize("view", VIEWS)
def test_quick_presses_that_break_away_leave_the_chart_as_its_title_says(browser, base_url, view):
    from playwright.sync_api import expect

    name, heading, picture = VIEWS[view]
    query = f"view={view}&text={TEXT.replace(' ', '+')}&layer={START}&head={START}"
    teacher, student, alone = (open_tab(browser, viewport=SCREEN) for _ in range(3))
    try:
        load_page(teacher, f"{base_url}/?teach=1&{query}", drawn=drawn)
        code = url_params(teacher)["class"]
        load_page(student, f"{base_url}/?class={code}", drawn=drawn)
        expect(student.get_by_text("Following the teacher")).to_be_visible()
        expect(chart_input_readout(student, name)).to_have_text(str(START))
        expect(student.get_by_role("heading", name=heading(START), exact=True)).to_be_visible()

        target = chart_input(student, name)
        target.focus()
        for _ in range(PRESSES):
            target.press("ArrowRight")
            student.wait_for_timeout(GAP_MS)
        wait_until_settled(student)
        student.wait_for_timeout(AFTER_POLLS_MS)
        wait_until_settled(student)

        expect(student.get_by_text("You are exploring on your own")).to_be_visible()
        reached = START + PRESSES
        shown = {"input": target.input_value(), "readout": chart_input_readout(student, name).inner_text(),
                 "link": url_params(student).get(name, "0")}
        assert shown == dict.fromkeys(shown, str(reached)), f"the chart and its link should say {reached}: {shown}"
        expect(student.get_by_role("heading", name=heading(reached), exact=True)).to_be_visible()
        load_page(alone, f"{base_url}/?{re.sub(rf'{name}={START}', f'{name}={reached}', query)}", drawn=drawn)
        assert picture(student) == picture(alone), f"the chart does not draw {name} {reached}, as its title says"
    finally:
        for page in (teacher, student, alone):
            page.context.close()


def test_a_notice_that_goes_at_the_first_move_leaves_the_chart_where_the_move_took_it(page, base_url):
    from playwright.sync_api import expect

    load_page(page, f"{base_url}/?text={TEXT.replace(' ', '+')}&head=99")
    expect(page.get_by_text("head=99 does not exist")).to_be_visible()
    target = chart_input(page, "head")
    target.focus()
    target.press("ArrowLeft")
    wait_until_settled(page)
    expect(page.get_by_text("head=99 does not exist")).to_have_count(0)
    expect(page.get_by_role("heading", name="Layer 0, head 10", exact=True)).to_be_visible()
    assert (target.input_value(), url_params(page).get("head")) == ("10", "10")


def test_a_student_who_follows_again_sees_the_head_the_teacher_is_at(browser, base_url):
    """A student breaks away on the chart's own input (head 3), the teacher moves on (head 5), the student presses
    Follow the teacher again: the chart is drawn anew at the teacher's head, and must draw that head's weights, as
    its input, its heading and its link say, not the head the student's own presses had left."""
    from playwright.sync_api import expect

    query = f"text={TEXT.replace(' ', '+')}"
    teacher, student, alone = (open_tab(browser, viewport=SCREEN) for _ in range(3))
    try:
        load_page(teacher, f"{base_url}/?teach=1&{query}")
        load_page(student, f"{base_url}/?class={url_params(teacher)['class']}")
        move_head_to(student, 3)
        expect(student.get_by_text("You are exploring on your own")).to_be_visible()
        move_head_to(teacher, 5)
        student.get_by_role("button", name="Follow the teacher again").click()
        expect_head(student, 5)
        wait_until_settled(student)
        load_page(alone, f"{base_url}/?{query}&head=5")
        assert chart_pixels(student) == chart_pixels(alone), "the chart says head 5 and draws another head"
    finally:
        for page in (teacher, student, alone):
            page.context.close()
