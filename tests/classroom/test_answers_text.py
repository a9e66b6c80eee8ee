"""The class's answers chart names itself to a screen reader (question_results.describe_answers, the chart's
description, which Vega writes as its aria-label): each round's votes from the store, the most chosen first, and the
page's answer; a teacher's words quoted as data, and cut short."""

from __future__ import annotations

import json

from components.caches import stores
from components.classroom.question_results import answers_chart, describe_answers
from components.server.question_store import Asked, Question
from tests.classroom.test_question_page import answers_chart as answers_charts
from tests.classroom.test_question_page import ask, teacher_page
from tests.pages import assert_healthy, open_page

TWO_ROUNDS = Asked(1, Question("previous", "Which head is a previous-token head?", ("Head 0", "Head 1", "Head 2"),
                               answer=2), "revealed", 2, ((3, 1, 4), (0, 1, 7)))


def test_each_round_says_its_votes_most_chosen_first_and_the_pages_answer():
    assert describe_answers(TWO_ROUNDS) == (
        "The class's answers, round 1, 8 votes: 'Head 2' 4, 'Head 0' 3, 'Head 1' 1; round 2, 8 votes: 'Head 2' 7, "
        "'Head 1' 1, 'Head 0' 0. The page's answer: 'Head 2', 4 then 7 votes.")
    assert answers_chart(TWO_ROUNDS, 500).to_dict()["description"] == describe_answers(TWO_ROUNDS)


def test_many_choices_name_three_and_a_teachers_words_stay_data_and_short():
    words = "<b>an answer that goes on</b> " * 2  # 60 characters, HTML kept as text
    own = Asked(2, Question("own", "Which?", ("x", words, "'quoted'", "y", "z")), "revealed", 1, ((0, 2, 1, 0, 1),))
    assert describe_answers(own) == (
        "The class's answers, round 1, 4 votes: '<b>an answer that goes on</b> <b>an…' 2, \"'quoted'\" 1, 'z' 1, "
        "the rest 0. The teacher's own question: no answer computed.")
    quiet = Asked(3, Question("own", "Which?", tuple("abcde")), "revealed", 1, ((2, 0, 0, 0, 0),))
    assert "'a' 2, 'b' 0, 'c' 0, the rest 0." in describe_answers(quiet)


def test_the_revealed_chart_on_a_students_page_says_the_stores_votes():
    page, code, key = teacher_page()
    ask(page, "entropy")
    question = stores.questions().results(code, key)[-1].question
    for voter, choice in (("voter-aaaaaaaaaaaa1", question.answer), ("voter-aaaaaaaaaaaa2", question.answer),
                          ("voter-aaaaaaaaaaaa3", (question.answer + 1) % len(question.choices))):
        assert stores.questions().vote(code, voter, choice)
    page.button(key="quiz_reveal").click().run()
    assert_healthy(page)
    student = open_page(**{"class": code})
    assert_healthy(student)
    [chart] = answers_charts(student)
    description = json.loads(chart.proto.spec)["description"]
    answer, other = question.choices[question.answer], question.choices[(question.answer + 1) % len(question.choices)]
    assert description.startswith(f"The class's answers, round 1, 3 votes: {answer!r} 2, {other!r} 1"), description
    assert description.endswith(f"The page's answer: {answer!r}, 2 votes."), description
