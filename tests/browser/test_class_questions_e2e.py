"""A question asked of a class, in real Chromium tabs: a teacher's projected page and two students on one server.

The teacher asks which key a token attends to most; one student answers and changes their mind, the other answers,
reloads and answers again from a second tab of the same browser: the teacher's page counts two answers. No student's
page shows a count before the reveal. The teacher closes the round, opens a second vote (one student answers) and
reveals: every page shows the class's bars and the page's answer (transformers' own argmax), and the students' pages
move to the neuron view of that token. The teacher's CSV holds the votes of both rounds.

Screenshots go to screenshots/questions/ (git-ignored): the teacher's page at 1280×720 with present=1 during the
round and after the reveal, and a student's phone at 390×844 with the question and after the reveal.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from attention.dissect.parity import transformers_weights
from attention.text.encoding import encode
from harness.browser import load_page, open_expander, open_tab, tab_in, wait_until_settled
from harness.question_pages import CARD, FOLLOW_TIMEOUT_MS, answered, choose
from harness.server import get_json
from tests.marks import BROWSER_TESTS

pytestmark = [*BROWSER_TESTS, pytest.mark.long]

SHOTS = Path(__file__).resolve().parents[2] / "screenshots" / "questions"
TEXT = "the cat sat on the mat"
QUERY = 1  # the page's default query token: "the" (1)
PROJECTOR, PHONE = {"width": 1280, "height": 720}, {"width": 390, "height": 844}


def expected_answer(bundled) -> str:
    """The key transformers' own layer 0, head 0 weights give the query its largest weight, as the page labels it."""
    encoding = encode(bundled, TEXT)
    row = transformers_weights(bundled, encoding, 0)[0, 0, QUERY]
    key = int(np.argmax(row))
    return f"{encoding.tokens[0][key]} ({key})"


def test_a_question_is_asked_answered_once_per_browser_hidden_until_the_reveal_and_downloaded(browser, base_url,
                                                                                             bundled):
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher = open_tab(browser, viewport=PROJECTOR)
    load_page(teacher, f"{base_url}/?teach=1&present=1&text={TEXT.replace(' ', '+')}")
    expect(teacher).to_have_url(re.compile(r"[?&]class=[A-Z2-9]{6}&key=[\w-]{22,}"))
    code = re.search(r"[?&]class=([A-Z2-9]{6})", teacher.url).group(1)
    first, second = open_tab(browser), open_tab(browser, viewport=PHONE)
    try:
        for page in (first, second):
            load_page(page, f"{base_url}/?class={code}")

        open_expander(teacher, "Ask the class a question")
        teacher.get_by_role("button", name="Ask the class", exact=True).click()
        answered(teacher, 0)
        for page in (first, second):
            expect(page.locator(CARD)).to_contain_text("Question 1: Which key will “the” (1) attend to most",
                                                       timeout=FOLLOW_TIMEOUT_MS)
        second.screenshot(path=SHOTS / "student-question-390x844.png")

        choose(first, "cat (2)")
        choose(first, "mat (6)")  # a change of mind: still one answer
        choose(second, "[CLS] (0)")
        answered(teacher, 2)
        second.reload()
        expect(second.locator(CARD)).to_contain_text("Your answer: [CLS] (0)")
        again = tab_in(second.context)  # a second tab of the same browser: the same voter
        load_page(again, f"{base_url}/?class={code}")
        choose(again, "the (5)")
        expect(again.locator(CARD)).to_contain_text("Your answer: the (5)")
        answered(teacher, 2)
        teacher.screenshot(path=SHOTS / "teacher-round-present-1280x720.png")

        status, watched = get_json(f"{base_url}/api/class?code={code}")  # the route a student's page asks
        assert status == 200 and not {"counts", "votes", "answered", "answer"} & set(watched), watched
        for page in (first, second, again):  # no count anywhere on a student's page before the reveal
            expect(page.locator(CARD)).not_to_contain_text("answered")
            expect(page.locator(CARD).locator('[data-testid="stVegaLiteChart"]')).to_have_count(0)
            expect(page.locator(CARD)).not_to_contain_text("page's answer")
            assert "votes" not in page.content() and "answer" not in page.url

        teacher.get_by_role("button", name="Close the round").click()
        for page in (first, again):
            expect(page.locator(CARD)).to_contain_text("The round is closed", timeout=FOLLOW_TIMEOUT_MS)
        teacher.get_by_role("button", name="Open a second vote").click()  # after the class has discussed
        for page in (first, second):
            expect(page.locator(CARD)).to_contain_text("Question 1 · second vote", timeout=FOLLOW_TIMEOUT_MS)
        choose(first, "the (5)")
        answered(teacher, 1)
        answer = expected_answer(bundled)
        teacher.get_by_role("button", name="Reveal").click()
        for page in (teacher, first, second, again):
            expect(page.locator(CARD)).to_contain_text(f"The page's answer: {answer}", timeout=FOLLOW_TIMEOUT_MS)
            expect(page.locator(CARD).locator('[data-testid="stVegaLiteChart"]')).to_have_count(1)
        for page in (first, second):  # the class moves to the view that shows why: the token's row, number by number
            expect(page).to_have_url(re.compile(r"[?&]view=neuron(&|$)"), timeout=FOLLOW_TIMEOUT_MS)
        for page in (teacher, second):
            wait_until_settled(page)
        teacher.mouse.move(0, 0)
        teacher.screenshot(path=SHOTS / "teacher-revealed-present-1280x720.png")
        second.screenshot(path=SHOTS / "student-revealed-390x844.png")

        with teacher.expect_download() as download:
            teacher.get_by_role("button", name="Download the class's answers (CSV)").click()
        rows = list(csv.DictReader(download.value.path().read_text(encoding="utf-8").splitlines()))
        votes = {row["choice"]: int(row["votes_round_1"]) for row in rows}
        assert votes["mat (6)"] == 1 and votes["the (5)"] == 1 and sum(votes.values()) == 2, votes
        second_votes = {row["choice"]: int(row["votes_round_2"]) for row in rows}
        assert second_votes["the (5)"] == 1 and sum(second_votes.values()) == 1, second_votes
        assert [row["choice"] for row in rows if row["page_answer"] == "yes"] == [answer]
    finally:
        for page in (teacher, first, second):
            page.context.close()


def test_the_forms_token_picked_from_the_keyboard_is_the_one_asked(browser, base_url):
    """The form is a fragment of its own: the token picked reruns it alone, and Ask reruns the page, whose card then
    shows the round of that token's question."""
    from playwright.sync_api import expect

    teacher = open_tab(browser, viewport=PROJECTOR)
    try:
        load_page(teacher, f"{base_url}/?teach=1&text={TEXT.replace(' ', '+')}")
        expect(teacher).to_have_url(re.compile(r"[?&]class=[A-Z2-9]{6}"))
        open_expander(teacher, "Ask the class a question")
        token = teacher.locator(".st-key-quiz_token input[role='combobox']")
        token.press("ArrowDown")  # opens the list on the token after the page's query, "cat" (2)
        teacher.get_by_role("option", name="cat (2)").wait_for()  # an Enter before the list stands chooses nothing
        token.press("Enter")
        expect(token).to_have_value("cat (2)")
        wait_until_settled(teacher)
        teacher.get_by_role("button", name="Ask the class", exact=True).click()
        expect(teacher.locator(CARD)).to_contain_text("Question 1: Which key will “cat” (2) attend to most")
        answered(teacher, 0)
    finally:
        teacher.context.close()


def test_a_round_asked_leaves_the_teachers_chart_where_it_was(browser, base_url):
    """The card, the form and the CSV stand in one slot above the view: a round asked adds a card there, and the
    view's chart is the same element after it, its numbers kept, not one mounted anew from its spec (which Vega
    builds again: about 400 ms on the teacher's page)."""
    from playwright.sync_api import expect

    teacher = open_tab(browser, viewport=PROJECTOR)
    try:
        load_page(teacher, f"{base_url}/?teach=1&text={TEXT.replace(' ', '+')}")
        open_expander(teacher, "Ask the class a question")
        chart = teacher.locator('[data-testid="stMain"] [data-testid="stVegaLiteChart"]').first
        chart.evaluate("element => { element.dataset.before = 'asked'; }")
        teacher.get_by_role("button", name="Ask the class", exact=True).click()
        answered(teacher, 0)
        wait_until_settled(teacher)
        expect(teacher.locator('[data-testid="stVegaLiteChart"][data-before="asked"]')).to_have_count(1)
    finally:
        teacher.context.close()
