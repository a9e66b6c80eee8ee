"""The teacher's questions on the page, through AppTest: each kind asked from the view it belongs to, with the answer
transformers' weights give; a student's page that shows the question but no count, no answer and no teacher's
button before the reveal; a teacher's own words shown as text, never as Markdown or HTML.

Pages of one test process share the server's memory store, as sessions of one server do.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from attention.dissect.parity import transformers_weights
from attention.text.encoding import encode
from components.caches import stores
from components.classroom import questions
from components.server.class_store import STORE_ENV
from components.server.question_store_redis import RedisQuestions
from harness.redis import redis_server
from tests.pages import assert_healthy, open_page

TEXT = "the cat sat on the mat because the cat was tired"


def teacher_page(**params: str):
    page = open_page(teach="1", text=TEXT, **params)
    assert_healthy(page)
    return page, page.query_params["class"], page.query_params["key"]


def ask(page, kind: str, **widgets) -> None:
    page.selectbox(key="quiz_kind").set_value(kind).run()
    for key, value in widgets.items():
        page.selectbox(key=key).set_value(value).run()
    page.button(key="quiz_ask").click().run()
    assert_healthy(page)


def answers_chart(page) -> list:
    """The class's bars (components/classroom/question_results.py): the chart whose panels are the rounds."""
    return [chart for chart in page.get("vega_lite_chart") if '"row": {"field": "round"' in chart.proto.spec]


def asked(code: str, key: str):
    return stores.questions().results(code, key)[-1]


def test_the_previous_token_head_asked_from_all_heads_is_the_one_transformers_names(bundled):
    page, code, key = teacher_page(view="heads", layer="2")
    ask(page, "previous")
    question = asked(code, key).question
    weights = transformers_weights(bundled, encode(bundled, TEXT), 2)[0]  # (nh, T, T)
    expected = int(np.argmax([np.diagonal(head, offset=-1).mean() for head in weights]))
    assert question.choices[question.answer] == f"Head {expected}"
    assert dict(question.view) == {"view": "heads", "layer": "2", "head": str(expected)}


@pytest.mark.parametrize("mask", ["causal", "model"])
def test_a_masked_row_sums_to_one_whatever_the_mask(mask):
    page, code, key = teacher_page(mask=mask, layer="1", head="4")
    ask(page, "mask", quiz_token=3)
    question = asked(code, key).question
    assert question.choices[question.answer] == "Yes"
    hidden = "9 of 13 keys" if mask == "causal" else "0 of 13 keys"
    assert hidden in question.why, question.why


def test_the_entropy_question_falls_and_reveals_on_the_scaling_lab():
    page, code, key = teacher_page()
    ask(page, "entropy")
    question = asked(code, key).question
    assert question.choices[question.answer] == "It falls" and "d_k = 32" in question.why
    assert dict(question.view)["view"] == "lab"


def test_a_student_sees_the_question_not_the_counts_the_answer_or_the_teachers_buttons_until_the_reveal(bundled):
    page, code, key = teacher_page()
    ask(page, "key", quiz_token=2)
    student = open_page(**{"class": code})
    assert_healthy(student)
    card = " ".join(markdown.value for markdown in student.markdown)
    assert "Question 1" in card and "attend to most" in card
    assert not answers_chart(student) and not student.success
    assert not [button for button in student.button if button.key in ("quiz_close", "quiz_reveal", "quiz_ask")]
    assert not any("answered" in markdown.value for markdown in student.markdown)
    page.button(key="quiz_reveal").click().run()
    assert_healthy(page)
    student.run()
    assert len(answers_chart(student)) == 1
    row = transformers_weights(bundled, encode(bundled, TEXT), 0)[0, 0, 2]
    tokens = encode(bundled, TEXT).tokens[0]
    expected = questions.plain(f"{tokens[int(np.argmax(row))]} ({int(np.argmax(row))})")
    assert any(expected in success.value for success in student.success), [s.value for s in student.success]


def test_a_teachers_own_words_are_shown_as_text():
    page, code, key = teacher_page()
    page.selectbox(key="quiz_kind").set_value("own").run()
    prompt = "<img src=x onerror=alert(1)> **loud** [a link](http://example.com)"
    page.text_input(key="quiz_prompt").set_value(prompt).run()
    page.text_area(key="quiz_choices").set_value("$x^2$\n<b>bold</b>\n[x](http://example.com)").run()
    page.button(key="quiz_ask_own").click().run()
    assert_healthy(page)
    assert asked(code, key).question.choices == ("$x^2$", "<b>bold</b>", "[x](http://example.com)")
    student = open_page(**{"class": code})
    heading = next(markdown.value for markdown in student.markdown if "Question 1" in markdown.value)
    assert questions.plain(prompt) in heading
    assert not re.search(r"(?<!\\)<img", heading) and "**loud**" not in heading
    assert "\\[a link\\]\\(http" in heading


@pytest.mark.needs("redis-server")
def test_in_redis_a_question_asked_on_one_page_reaches_another_and_so_does_its_reveal(monkeypatch, tmp_path):
    """The server's store setting names a real redis-server: the question, its round and its reveal go through it."""
    with redis_server(tmp_path) as server:
        monkeypatch.setenv(STORE_ENV, server.url)
        stores.classes.clear()
        stores.questions.clear()
        try:
            page, code, key = teacher_page()
            assert isinstance(stores.questions(), RedisQuestions)
            ask(page, "entropy")
            student = open_page(**{"class": code})
            assert any("Question 1" in markdown.value for markdown in student.markdown)
            assert not answers_chart(student)
            page.button(key="quiz_reveal").click().run()
            student.run()
            assert any("It falls" in success.value for success in student.success)
            assert len(answers_chart(student)) == 1
        finally:
            stores.classes.clear()
            stores.questions.clear()


def test_an_address_in_a_teachers_words_is_no_link():
    shown = questions.plain("see http://example.com, www.example.org or me@example.com")
    assert shown.count(questions.WORD_JOINER) == 3 and "http://" not in shown.replace("\\", "")
