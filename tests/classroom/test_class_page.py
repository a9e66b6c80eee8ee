"""A class on the page, through AppTest: links that start, follow or misuse a class.

Pages of one test process share the server's memory store (components/caches/stores.classes), as sessions of one
server do, so a teacher's page and a student's page meet in it. The poll that a browser's timer repeats runs
here with each run of the student's page.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from components.caches import stores
from components.classroom import class_link
from components.private_hooks import app_test_tree
from components.server.class_store import STORE_ENV
from tests.pages import APP, assert_healthy, open_page

FOLLOWING = "Following the teacher"


def warnings(page: AppTest) -> list[str]:
    return [warning.value for warning in page.warning]


def captions(page: AppTest) -> list[str]:
    return [caption.value for caption in page.caption]


@pytest.fixture
def store_setting(monkeypatch):
    """Set the server's ATTENTION_ANATOMY_CLASS_STORE for the test's pages: its store (cached for the process)
    is made again from the setting, and after the test from the usual one."""
    stores.classes.clear()
    yield lambda value: monkeypatch.setenv(STORE_ENV, value)
    stores.classes.clear()


def start_class() -> tuple[AppTest, str, str]:
    teacher = open_page(teach="1")
    assert_healthy(teacher)
    return teacher, teacher.query_params["class"], teacher.query_params["key"]


def test_teach_opens_a_class_and_a_student_takes_the_teachers_view():
    teacher, code, key = start_class()
    assert len(code) == 6 and len(key) >= 22
    teacher.text_area(key="text").set_value("the class reads this").run()
    student = open_page(**{"class": code})
    assert_healthy(student)
    assert any(caption.startswith(FOLLOWING) for caption in captions(student))
    assert student.text_area(key="text").value == "the class reads this"
    assert student.query_params["class"] == code and "key" not in student.query_params
    teacher.text_area(key="text").set_value("and now this").run()
    student.run()
    assert student.text_area(key="text").value == "and now this"
    assert student.query_params["text"] == "and now this"


def test_a_students_own_move_leaves_follow_mode_and_never_reaches_the_teacher():
    teacher, code, _ = start_class()
    student = open_page(**{"class": code})
    student.text_area(key="text").set_value("my own sentence").run()
    assert any("exploring on your own" in info.value for info in student.info)
    teacher.run()
    assert teacher.text_area(key="text").value != "my own sentence"
    teacher.text_area(key="text").set_value("the teacher moves on").run()
    student.run()
    assert student.text_area(key="text").value == "my own sentence"  # exploring: stays
    student.button(key="follow_again").click().run()
    assert student.text_area(key="text").value == "the teacher moves on"
    assert any(caption.startswith(FOLLOWING) for caption in captions(student))


def test_two_teacher_tabs_with_one_key_the_later_change_wins():
    first, code, key = start_class()
    second = open_page(**{"class": code, "key": key})
    assert_healthy(second)
    assert second.query_params["key"] == key  # a teacher too
    first.text_area(key="text").set_value("from the first tab").run()
    second.text_area(key="text").set_value("from the second tab").run()
    student = open_page(**{"class": code})
    assert student.text_area(key="text").value == "from the second tab"
    assert_healthy(first)
    assert_healthy(second)


def test_a_wrong_key_follows_and_cannot_drive():
    teacher, code, key = start_class()
    teacher.text_area(key="text").set_value("only the teacher drives").run()
    wrong = open_page(**{"class": code, "key": "A" * len(key)})
    assert_healthy(wrong)
    assert any("key is not class" in notice for notice in warnings(wrong))
    assert "key" not in wrong.query_params
    assert wrong.text_area(key="text").value == "only the teacher drives"
    wrong.text_area(key="text").set_value("a student's text").run()
    student = open_page(**{"class": code})
    assert student.text_area(key="text").value == "only the teacher drives"


def test_bad_class_links_give_a_notice_and_the_normal_page():
    cases = {
        "<b>bold</b>": "is not a class code",
        "ABC": "is not a class code",
        "ZZZZZZ": "has ended or does not exist",
    }
    for code, notice in cases.items():
        page = open_page(**{"class": code})
        assert_healthy(page)
        assert any(notice in warning for warning in warnings(page)), (code, warnings(page))
        assert "class" not in page.query_params and not any(FOLLOWING in c for c in captions(page))
    shown = next(warning for warning in warnings(open_page(**{"class": "<b>bold</b>"})) if "class=" in warning)
    assert "`<b>bold</b>`" in shown  # a code span: shown as typed, never as HTML
    keyless = open_page(key="A" * 32)
    assert any("key but no class code" in warning for warning in warnings(keyless))
    assert "key" not in keyless.query_params


def test_an_ended_class_leaves_the_student_where_it_was():
    teacher, code, _ = start_class()
    teacher.text_area(key="text").set_value("the last view").run()
    student = open_page(**{"class": code})
    teacher.button(key="end_class").click().run()
    assert "class" not in teacher.query_params and "key" not in teacher.query_params
    student.run()
    assert_healthy(student)
    assert any("has ended" in warning for warning in warnings(student))
    assert student.text_area(key="text").value == "the last view"
    assert "class" not in student.query_params


def test_the_sidebar_button_starts_a_class_as_teach_does():
    page = open_page(text="a lesson started from the sidebar")
    assert "class" not in page.query_params
    page.button(key="start_class").click().run()
    assert_healthy(page)
    code, key = page.query_params["class"], page.query_params["key"]
    assert page.button(key="end_class") and not [b for b in page.button if b.key == "start_class"]
    student = open_page(**{"class": code})
    assert student.text_area(key="text").value == "a lesson started from the sidebar"
    assert key not in str(student.query_params)


def open_teacher_at(url: str, **params: str) -> AppTest:
    """A teacher's page (teach=1) as a browser at url opens it: the students' link starts with url."""
    page = AppTest.from_file(APP, default_timeout=120)
    page.context["url"] = url
    for name, value in {"teach": "1", **params}.items():
        page.query_params[name] = value
    return page.run()


def test_a_link_to_this_computer_gets_a_warning_that_says_what_to_open_instead(monkeypatch):
    monkeypatch.setattr(class_link, "network_address", lambda: "192.168.1.23")
    for here in ("http://localhost:8501", "http://127.0.0.1:8501", "http://[::1]:8501", "http://0.0.0.0:8501"):
        teacher = open_teacher_at(here)
        assert_healthy(teacher)
        said = [notice for notice in warnings(teacher) if notice.startswith("Phones cannot open this link")]
        assert len(said) == 1 and "**192.168.1.23** in its place in the address bar" in said[0], (here, said)
    monkeypatch.setattr(class_link, "network_address", lambda: None)
    assert any("Streamlit's Network URL" in notice for notice in warnings(open_teacher_at("http://localhost:8501")))


def test_a_link_students_can_open_gets_no_warning():
    for there in ("http://192.168.1.23:8501", "https://attention.example.org/anatomy"):
        teacher = open_teacher_at(there)
        assert_healthy(teacher)
        assert not [notice for notice in warnings(teacher) if "Phones cannot open" in notice], there


def test_a_projected_class_shows_its_code_and_link_on_the_page():
    teacher = open_teacher_at("http://192.168.1.23:8501", present="1")
    code = teacher.query_params["class"]
    link = f"http://192.168.1.23:8501?class={code}"
    assert any(block.value == f"**Class {code}** · join at" for block in teacher.main.markdown)
    assert [text.value for text in teacher.main.text] == [link]
    assert teacher.main.button(key="large_qr_card")
    plain = open_teacher_at("http://192.168.1.23:8501")
    assert not plain.main.text and not [b for b in plain.main.button if b.key == "large_qr_card"]


def large_qr_links(page: AppTest) -> list[str]:
    """The links the page's open dialogs show in large letters (class_link.plain escapes their characters)."""
    def dialogs(node) -> list:
        found = [node] if getattr(node, "type", "") == "dialog" else []
        return found + [dialog for child in getattr(node, "children", {}).values() for dialog in dialogs(child)]

    return [markdown.value.rsplit("\n## ", 1)[-1].replace("\\", "") for dialog in dialogs(app_test_tree(page))
            for markdown in dialog.markdown if "Scan the code" in markdown.value]


def test_the_large_qr_code_stays_open_through_reruns_until_the_class_ends():
    """Opened from the sidebar or from the projected card, it is drawn again at every run until the teacher closes
    it: a rerun it did not ask for (a reconnect) must not close it under the class's eyes."""
    for key, params in (("large_qr", {}), ("large_qr_card", {"present": "1"})):
        teacher = open_teacher_at("http://192.168.1.23:8501", **params)
        link = f"http://192.168.1.23:8501?class={teacher.query_params['class']}"
        assert large_qr_links(teacher) == []
        teacher.button(key=key).click().run()
        assert large_qr_links(teacher) == [link], key
        teacher.run()
        assert large_qr_links(teacher) == [link], f"{key}: closed by a rerun"
        teacher.button(key="end_class").click().run()
        assert_healthy(teacher)
        assert large_qr_links(teacher) == [], f"{key}: still open after the class ended"


def published(code: str) -> dict[str, str]:
    """The view the class's store holds for its students: what the teacher's page last sent."""
    return stores.classes().read(code).settings


def test_a_query_the_neuron_view_moves_to_the_texts_end_keeps_the_students_following():
    teacher = open_page({"teach": "1", "view": "neuron", "query": "9"})  # [CLS] time flies like an arrow [SEP]: 0 to 6
    assert_healthy(teacher)
    code = teacher.query_params["class"]
    assert published(code)["query"] == "6"  # never the 9 that the page did not show
    student = open_page(**{"class": code})
    student.run()  # a rerun of the student's page without a move of the student's
    assert_healthy(student)
    assert any(caption.startswith(FOLLOWING) for caption in captions(student))
    assert student.query_params["query"] == "6"
    teacher.text_area(key="text").set_value("hi").run()  # [CLS] hi [SEP]: the query moves to 2
    assert published(code)["query"] == "2"
    student.run()  # takes the teacher's new view
    student.run()
    assert_healthy(student)
    assert any(caption.startswith(FOLLOWING) for caption in captions(student)), [i.value for i in student.info]
    assert (student.text_area(key="text").value, student.query_params["query"]) == ("hi", "2")


def test_a_student_fits_a_teachers_query_past_the_texts_end_and_keeps_following():
    teacher, code, key = start_class()
    stores.classes().publish(code, key, {"view": "neuron", "query": "9"})  # as a page that does not fit it would
    student = open_page(**{"class": code})
    student.run()  # a rerun of the student's page without a move of the student's
    assert_healthy(student)
    assert any(caption.startswith(FOLLOWING) for caption in captions(student)), [i.value for i in student.info]
    assert student.query_params["query"] == "6"


def test_a_mistyped_store_setting_turns_the_classes_off_and_says_what_it_must_be(store_setting):
    def says_what_the_setting_must_be(notices: list[str]) -> bool:
        return any(STORE_ENV in notice and "redis://host:6379/0" in notice for notice in notices)

    store_setting("redis:/localhost")
    student = open_page(**{"class": "ABCDEF"})
    assert_healthy(student)
    assert says_what_the_setting_must_be(warnings(student)), warnings(student)
    assert "class" not in student.query_params and not any(FOLLOWING in c for c in captions(student))
    store_setting("memcached://x")
    teacher = open_page(teach="1")
    assert_healthy(teacher)
    assert says_what_the_setting_must_be(warnings(teacher)), warnings(teacher)
    assert "class" not in teacher.query_params and not [b for b in teacher.button if b.key == "end_class"]
    store_setting("redis://localhost:6379x/0")  # a Redis URL redis-py cannot read
    plain = open_page()
    assert_healthy(plain)
    assert not [b for b in plain.button if b.key == "start_class"]  # in its place, why classes are off
    assert says_what_the_setting_must_be(captions(plain)), captions(plain)
