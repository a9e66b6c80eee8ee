"""A class follows every setting of its teacher's page, through AppTest: the one-head view's stage, mask and window,
the sink and word toggles, the value norm and the colour scale, the pair filter, the all-heads aggregate, the atlas,
whether the compare view counts the sinks and the heads switched off; a student who breaks away and follows again
comes back to all of them. The links that hold the stage and the heads off, checked as every value of a link is.

Pages of one test process share the server's memory store, as sessions of one server do
(tests/classroom/test_class_page.py); tests/browser/test_class_follows_e2e.py does the same in Chromium.
"""

from __future__ import annotations

from components.page import page_state
from tests.pages import assert_healthy, open_page

FOLLOWING = "Following the teacher"


def start_class(**params: str):
    teacher = open_page(teach="1", **params)
    assert_healthy(teacher)
    return teacher, teacher.query_params["class"]


def shown(page) -> page_state.PageState:
    """The page's state as its link writes it."""
    return page_state.from_query({name: [value] for name, value in page.query_params.items()}, ("all-MiniLM-L6-v2",))[0]


def test_the_one_head_views_settings_follow_and_come_back_after_a_break():
    teacher, code = start_class(text="the cat sat on the mat", text_b="it was warm")
    student = open_page(**{"class": code})
    teacher.segmented_control(key="head_stage").set_value("Masked scores").run()
    teacher.segmented_control(key="mask").set_value("window").run()
    teacher.slider(key="window").set_value(2).run()
    teacher.segmented_control(key="head_stage").set_value("Attention weights").run()
    teacher.toggle(key="hide_special").set_value(True).run()
    teacher.toggle(key="words").set_value(True).run()
    teacher.toggle(key="value_norm").set_value(True).run()
    teacher.segmented_control(key="weight_scale").set_value("one").run()
    teacher.segmented_control(key="pair").set_value("a_to_b").run()
    teacher.segmented_control(key="head_stage").set_value("Masked scores").run()
    assert_healthy(teacher)
    expected = {"head_stage": "masked", "mask": "window", "window": "2", "hide_special": "1", "words": "1",
                "value_norm": "1", "weight_scale": "one", "pair": "a_to_b"}
    assert expected.items() <= dict(teacher.query_params).items()

    student.run()
    assert_healthy(student)
    assert any(caption.value.startswith(FOLLOWING) for caption in student.caption)
    assert expected.items() <= dict(student.query_params).items()
    assert student.segmented_control(key="head_stage").value == "Masked scores"
    assert student.segmented_control(key="mask").value == "window" and student.slider(key="window").value == 2

    student.segmented_control(key="head_stage").set_value("Raw scores Q·Kᵀ").run()
    student.segmented_control(key="mask").set_value("causal").run()
    assert any("exploring on your own" in info.value for info in student.info)
    assert shown(student).head_stage == "Raw scores Q·Kᵀ"
    student.segmented_control(key="head_stage").set_value("Attention weights").run()
    student.toggle(key="words").set_value(False).run()
    student.toggle(key="hide_special").set_value(False).run()
    student.button(key="follow_again").click().run()
    assert_healthy(student)
    assert expected.items() <= dict(student.query_params).items()
    assert student.segmented_control(key="mask").value == "window"
    assert student.segmented_control(key="head_stage").value == "Masked scores"


def test_the_aggregate_the_atlas_the_compare_views_sinks_and_the_heads_off_follow():
    teacher, code = start_class(text="the animal was tired", text_b="the animal was wide")
    student = open_page(**{"class": code})
    teacher.radio(key="view").set_value("compare").run()
    teacher.toggle(key="compare_special").set_value(True).run()
    teacher.radio(key="view").set_value("heads").run()
    teacher.segmented_control(key="aggregate").set_value("max").run()
    teacher.radio(key="view").set_value("atlas").run()
    teacher.segmented_control(key="atlas").set_value("text").run()
    teacher.radio(key="view").set_value("switch").run()
    teacher.session_state["_page_state"]["off"] = ((1, 3), (4, 0))  # as a press of two toggles does
    teacher.run()
    assert_healthy(teacher)
    expected = {"view": "switch", "aggregate": "max", "atlas": "text", "off": "1:3,4:0", "compare_special": "1"}
    assert expected.items() <= dict(teacher.query_params).items()
    student.run()
    assert_healthy(student)
    assert expected.items() <= dict(student.query_params).items()
    assert any(caption.value.startswith(FOLLOWING) for caption in student.caption)


def test_a_link_holds_the_stage_and_the_heads_off_and_a_bad_one_falls_back_with_a_notice():
    page = open_page(head_stage="scores")
    assert_healthy(page)
    assert page.segmented_control(key="head_stage").value == "Raw scores Q·Kᵀ"
    assert page.query_params["head_stage"] == "scores"

    page = open_page(head_stage="softmax", off="1:x")
    assert_healthy(page)
    warned = " ".join(warning.value for warning in page.warning)
    assert "head_stage=`softmax` was ignored" in warned and "off=`1:x` was ignored" in warned
    assert page.segmented_control(key="head_stage").value == "Attention weights"

    page = open_page(view="switch", off="2:5,9:0")  # the bundled model has 6 layers
    assert_healthy(page)
    assert any("off=9:0: no such head" in caption.value for caption in page.caption)
    assert page.query_params["off"] == "2:5"

    page = open_page(head_stage="rotation")  # a BERT's heads do not turn by position
    assert_healthy(page)
    assert page.segmented_control(key="head_stage").value == "Attention weights"
    assert any("no Rotation stage" in caption.value for caption in page.caption)
