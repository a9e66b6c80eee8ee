"""bench/every_control.py's links and presses: which views it opens on which model, and what it presses."""

from __future__ import annotations

from bench.every_control import (
    CHART_FLOOR_NAME,
    CHART_INPUT_NAMES,
    CLASS_OPEN,
    GROUP,
    LLAMA_VIEWS,
    ON_A_LLAMA,
    ON_IDENTITY,
    Control,
    against_references,
    built_anew,
    by_charts_redrawn,
    class_cases,
    moves,
    moves_again,
    pressed_again,
    slowest,
    view_queries,
)
from bench.page_speed import Case, ChartsRedrawn, Result
from components.page.lesson_steps import STEP_TITLES, lesson_for
from components.private_hooks import ForwardMsg
from harness.browser import Timing


def test_the_views_a_llama_changes_are_opened_on_it_too_the_lesson_at_its_rotary_step():
    queries = view_queries("a text", "", "/gpt2", "its text", llama_model="/llama")
    on_a_llama = {name: query for name, query in queries.items() if name.endswith(ON_A_LLAMA)}
    assert sorted(on_a_llama) == sorted(view + ON_A_LLAMA for view in LLAMA_VIEWS)
    assert all(query["model"] == "/llama" and query["text"] == "its text" for query in on_a_llama.values())
    step = int(on_a_llama["lesson" + ON_A_LLAMA]["step"])
    assert lesson_for(rotates=True, shares=True)[step - 1] == "rotary" and "rotary" in STEP_TITLES
    assert queries["lesson"]["step"] == "6" and "model" not in queries["head"]  # the bundled model's, as before
    assert not any(name.endswith(ON_A_LLAMA) for name in view_queries("a text", "", "/gpt2", "its text"))


def test_the_neuron_view_is_opened_on_the_identity_source_too_where_its_window_of_dimensions_stands():
    queries = view_queries("a text", "", "", "")
    assert queries["neuron" + ON_IDENTITY] == {"view": "neuron", "text": "a text", "source": "identity"}
    assert queries["neuron"] == {"view": "neuron", "text": "a text"}


def test_a_range_of_one_value_is_no_control_to_press():
    assert Control("head_head", "chart", value=0, min=0, max=0).fixed
    assert not Control("head_head", "chart", value=0, min=0, max=11).fixed
    assert not Control("source", "stButtonGroup").fixed


def test_a_button_group_is_pressed_at_its_first_option_not_chosen_or_at_its_last():
    group = Control("head_stage", "stButtonGroup")
    assert all(move.selector.endswith(">> nth=0") for move in moves(group))
    assert all(move.selector.endswith(">> nth=-1") for move in moves(group, last=True))


def test_the_class_questions_are_cases_of_a_started_class_with_the_form_open():
    cases = class_cases("a text")
    assert [case.name for case in cases] == ["class: quiz_token", "class: quiz_kind",
                                             "class: a round asked, closed, revealed"]
    assert all(case.open_with == CLASS_OPEN and case.query == {"view": "head", "text": "a text"} for case in cases)
    assert [move.selector for move in cases[-1].moves] == [f".st-key-quiz_{key} button"
                                                           for key in ("ask", "close", "reveal")]


def test_a_select_box_is_moved_down_up_down_so_that_no_press_chooses_what_it_holds():
    presses = moves(Control("quiz_kind", "stSelectbox"))
    assert [move.setup_keys for move in presses] == [("ArrowDown",), ("ArrowUp",), ("ArrowDown",)]
    assert all(move.key == "Enter" for move in presses)


def measured(name: str, settled_ms: float, built: list[int], sent: list[int] = ()) -> Result:
    """A control's result of three presses against a floor of 20 ms, each press building built[i] charts anew and
    redrawing sent[i] charts."""
    return Result(Case(name, GROUP, "", {}, [], 2.0), timings=[Timing(settled_ms, None)] * 3,
                  floor=[Timing(20.0, None)] * 3, built=built, charts_redrawn=list(sent))


def test_the_controls_that_build_a_chart_anew_are_named_slowest_first_by_their_median_press():
    results = [measured("neuron: source", 1000, [1, 1, 0]), measured("head: mask", 200, [0, 0, 0]),
               measured("compare: words", 500, [2, 2, 2])]
    assert built_anew(results) == (
        "2 of 3 controls build a chart anew at a press (a new spec, which Vega compiles and lays out again, where a "
        "spec kept has its numbers swapped in): neuron: source 50.0× (1 chart built anew); compare: words 25.0× "
        "(2 charts built anew).")
    assert slowest(results, 2) == ["neuron: source 50.0× (1 chart built anew)",
                                   "compare: words 25.0× (2 charts built anew)"]
    assert built_anew([measured("head: mask", 200, [])]) is None  # not counted: no line


def chart_message(spec: str, path: tuple[int, ...]) -> ForwardMsg:
    """A chart element as Streamlit sends it in full at delta path `path`, hashed as the server hashes it."""
    message = ForwardMsg()
    message.delta.new_element.vega_lite_chart.spec = spec
    message.metadata.delta_path[:] = path
    message.hash = f"hash of {spec}"
    return message


def by_hash(sent: ForwardMsg) -> bytes:
    """The message Streamlit sends for one the browser has already: its hash, where it goes."""
    message = ForwardMsg(ref_hash=sent.hash)
    message.metadata.delta_path[:] = sent.metadata.delta_path
    return message.SerializeToString()


def test_a_chart_is_redrawn_when_its_place_shows_other_content_whether_sent_in_full_or_by_its_hash():
    redraws = ChartsRedrawn()
    first, second = chart_message("weights A", (0, 3)), chart_message("weights B", (0, 3))
    text = ForwardMsg()
    text.delta.new_element.markdown.body = "Layer 0, head 0"
    seen = [redraws(frame) for frame in (first.SerializeToString(), by_hash(first), text.SerializeToString(),
                                         second.SerializeToString(), by_hash(first), "a text frame")]
    assert seen == [1, 0, 0, 1, 1, 0], "new; the same again; no chart; other numbers; the first back by hash; none"
    assert redraws(chart_message("weights A", (0, 5)).SerializeToString()) == 1, "the same chart at a new place"


def test_what_a_run_does_not_send_again_is_gone_at_its_end_so_a_chart_back_in_its_place_is_redrawn():
    redraws = ChartsRedrawn()
    chart = chart_message("weights A", (0, 3))
    begins, ends, cut_short = ForwardMsg(), ForwardMsg(), ForwardMsg()
    begins.new_session.SetInParent()
    ends.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
    cut_short.script_finished = ForwardMsg.FINISHED_EARLY_FOR_RERUN
    assert redraws(chart.SerializeToString()) == 1
    for run_end, redrawn in ((cut_short, 0), (ends, 1)):  # a run cut short clears nothing; a finished one, the chart
        redraws(begins.SerializeToString())
        redraws(chart_message("weights A", (0, 4)).SerializeToString())  # drawn one place down, a notice above it
        redraws(run_end.SerializeToString())
        assert redraws(by_hash(chart)) == redrawn


def test_the_controls_are_grouped_by_the_charts_a_press_redraws_each_group_at_its_median_ratio():
    results = [measured("head: table", 40, [0], [0, 0, 1]), measured("head: mask", 100, [0], [1, 1, 1]),
               measured("compare: mask", 140, [0], [1, 2, 1]), measured("heads: source", 300, [0], [3, 3, 3]),
               measured("block: layer", 200, [0], [4, 5, 4]), measured(CHART_FLOOR_NAME, 36, [], [1, 1, 1])]
    assert by_charts_redrawn(results) == (
        "By the charts a press redraws (other numbers or another spec than the page showed; a chart its run leaves as "
        "it was is not counted): none: 1 control, median 2.0×; one: 2 controls, median 6.0×; 3 or "
        "more: 2 controls, median 12.5×.")
    assert slowest(results, 1) == ["heads: source 15.0× (3 charts redrawn)"]
    assert by_charts_redrawn([measured("head: mask", 100, [0])]) is None  # not counted: no line


def test_the_controls_are_counted_against_the_floor_and_the_floor_with_one_heatmap_that_is_not_a_control():
    results = [measured("head: mask", 30, [0]), measured("neuron: source", 100, [1]),
               measured(CHART_FLOOR_NAME, 46, [])]
    assert against_references(results) == (
        "Of 2 controls, 1 settle within 2× the floor; the floor with one 32-token heatmap's new numbers settles at "
        "2.3× it, and 1 controls within that.")
    assert against_references(results[:2]) is None


def test_a_charts_own_input_on_a_page_of_nothing_else_is_a_reference_named_beside_them_not_a_control():
    results = [measured("head: mask", 30, [0]), measured(CHART_FLOOR_NAME, 46, []),
               measured(CHART_INPUT_NAMES["fragment"], 40, []), measured(CHART_INPUT_NAMES["none"], 21, [])]
    assert against_references(results) == (
        "Of 1 controls, 1 settle within 2× the floor; the floor with one 32-token heatmap's new numbers settles at "
        "2.3× it, and 1 controls within that. A chart's own input on a page of nothing else settles at 1.1× the "
        "floor when it switches in the browser alone, and at 2.0× when a run of a fragment holding the chart alone "
        "tells the server.")
    assert slowest(results) == ["head: mask 1.5×"]  # the references are not among the controls
    assert "A chart's own input" not in against_references(results[:3])  # one of the two alone says nothing


def test_a_range_or_a_select_box_pressed_again_goes_back_over_the_values_its_first_presses_drew():
    for control, pressed in ((Control("layer", "stSlider", value=0, max=5), "ArrowRight"),
                             (Control("layer", "stSlider", value=5, max=5), "ArrowLeft"),
                             (Control("layer_layer", "chart", value=0, max=5), "ArrowRight")):
        first, again = moves(control), moves_again(control)
        # right, left, right from v: v+1, v, v+1; then left, right, left: v, v+1, v (each drawn before)
        steps = [+1 if move.key == pressed else -1 for move in (*first, *again)]
        values = [sum(steps[:index + 1]) for index in range(len(steps))]
        assert values[len(first):] == [0, 1, 0] if pressed == "ArrowRight" else [0, -1, 0]
        assert set(values[len(first):]) <= {0, *values[:len(first)]}
    select = Control("quiz_kind", "stSelectbox")
    assert [move.setup_keys for move in moves_again(select)] == [("ArrowUp",), ("ArrowDown",), ("ArrowUp",)]


def test_a_button_group_or_a_toggle_is_pressed_again_as_before_and_a_button_not_at_all():
    for kind in ("stButtonGroup", "stCheckbox"):
        assert list(moves_again(Control("mask", kind))) == moves(Control("mask", kind))
    assert moves_again(Control("lesson_next", "stButton")) == ()


def test_the_controls_pressed_again_are_counted_against_their_floor_slowest_named():
    results = [measured("head: mask", 300, [0]), measured("neuron: source", 1000, [1])]
    results[0].again[:] = [Timing(30.0, None)] * 3
    results[1].again[:] = [Timing(200.0, None)] * 3
    assert pressed_again(results) == (
        "Pressed again over what they drew (nothing new to compute), 1 of 2 controls settle within 2× the floor, "
        "their median at 5.8×; the slowest so: neuron: source 10.0×; head: mask 1.5×.")
    assert slowest(results) == ["neuron: source 50.0× (again 10.0×; 1 chart built anew)",
                                "head: mask 15.0× (again 1.5×)"]
    assert pressed_again([measured("head: mask", 300, [0])]) is None
