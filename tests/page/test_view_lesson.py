"""The guided lesson driven through AppTest: every step from its link, the navigation, and the numbers it shows."""

from __future__ import annotations

import html
import re
import urllib.parse

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention.analyses.context import similarity_by_layer
from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.page.view_list import VIEWS
from components.views.parts.lesson_nav import RUNS, shown_alone, step_key
from components.views.parts.lesson_pair import word_key
from tests.core.test_value_norms import bert_reference
from tests.pages import (
    assert_healthy,
    chart_matrix,
    chart_texts,
    chart_title,
    chart_values,
    fill_lesson,
    html_table,
    open_page,
)

TEXT = "time flies like an arrow"
# Charts each step of the bundled BERT's lesson draws, by their titles' beginnings (a Llama's has two steps more:
# tests/page/test_lesson_steps_past_attention.py).
STEP_CHARTS = {
    1: ["Token embeddings", "One token, two sentences"],
    2: ["Scores E·Eᵀ"],
    3: ["Q", "K", "V"],
    4: ["Mask: 1 = may look", "Weights = softmax(scaled + M)"],
    5: ["Scaled scores", "Weights = softmax(scaled)"],
    6: ["Weights", "Context = weights · V"],
    7: ["Weights α", "What moves α·‖f(x)‖", "What each key offers"],
    8: ["Concatenated contexts", "Output = concat"],
    9: ["‖residual in‖"],
    10: ["Cosine similarity of “time”"],  # the text's first word that is not a stop word
    11: ["The text's embedding"],  # an encoder guesses no next token
}
LAST = len(STEP_CHARTS)
# Each step that compares one word in two sentences, by its number, and the name its select box's key ends in.
WORD_STEPS = {1: "tokens", 10: "context"}


def run_lesson(**query: str) -> AppTest:
    return open_page({"view": "lesson", **query})


def step_shown(page: AppTest) -> int:
    """The step the browser is told to show alone (every step has its container), checked against its title."""
    [style] = [h.proto.body for h in page.get("html") if ".st-key-lesson_step_" in h.proto.body]
    count = len(page.segmented_control(key="step").options)
    [step] = [step for step in range(1, count + 1) if style == shown_alone(step, count)]
    try:
        container = page.get_by_key(step_key(step))
    except KeyError:  # after the navigation's own rerun, AppTest's tree holds the navigation alone
        return step
    heading = container.subheader[0].value
    assert heading.startswith(f"Step {step} of {count}: "), heading
    return step


def current(page: AppTest):
    """The current step's container: every step's is on the page, the browser shows this one alone."""
    return page.get_by_key(step_key(step_shown(page)))


def said_of(page: AppTest, start: str) -> list[str]:
    """The text alternatives of the current step's charts that start so."""
    return [text for text in chart_texts(current(page)) if text.startswith(start)]


def chart(page: AppTest, title_start: str):
    found = [c for c in current(page).get("vega_lite_chart") if chart_title(c).startswith(title_start)]
    assert len(found) == 1, [chart_title(c) for c in current(page).get("vega_lite_chart")]
    return found[0]


def matrix_on_screen(page: AppTest, title_start: str) -> np.ndarray:
    return chart_matrix(chart(page, title_start), fill=np.nan)


def prose(page: AppTest) -> str:
    return "\n".join(m.value for m in current(page).markdown)


def captions(page: AppTest) -> str:
    return "\n".join(c.value for c in current(page).caption)


def word_picker(page: AppTest):
    return current(page).selectbox(key=word_key(WORD_STEPS[step_shown(page)]))


def trace_of(bundled, text: str = TEXT, **settings):
    return build_trace(bundled, encode(bundled, text), TraceSettings(**settings))


@pytest.mark.parametrize("step", range(1, LAST + 1))
def test_every_step_opens_from_its_link_and_draws_its_charts(step):
    page = run_lesson(step=str(step))
    assert_healthy(page)
    assert step_shown(page) == step
    assert page.segmented_control(key="step").value == step
    assert page.query_params["step"] == str(step) if step > 1 else "step" not in page.query_params
    for title in STEP_CHARTS[step]:
        chart(page, title)
    assert current(page).get("latex"), "every step has its formula"
    assert "| step | shape | formula |" in prose(page) or "| tensor | shape |" in prose(page)


def test_next_and_previous_move_the_step_and_the_url():
    page = run_lesson(step="10")
    page.button(key="lesson_next").click().run()
    assert_healthy(page)
    assert (step_shown(page), page.query_params["step"]) == (11, "11")
    assert page.button(key="lesson_next").disabled
    page.button(key="lesson_prev").click().run()
    page.button(key="lesson_prev").click().run()
    assert (step_shown(page), page.query_params["step"]) == (9, "9")
    page.segmented_control(key="step").set_value(2).run()
    page.button(key="lesson_prev").click().run()
    assert step_shown(page) == 1
    assert "step" not in page.query_params, "step 1 is the default"
    assert page.button(key="lesson_prev").disabled


def drawn_charts(page: AppTest) -> dict[int, list[str]]:
    """Each step's chart titles, by step (every step has its container)."""
    return {step: [chart_title(c) for c in page.get_by_key(step_key(step)).get("vega_lite_chart")]
            for step in STEP_CHARTS}


def test_the_step_is_drawn_its_neighbours_once_the_page_is_still_and_the_browser_shows_the_current_one_alone():
    page = run_lesson(step="4")
    assert_healthy(page)
    assert steps_with_charts(page) == [4], "a control beside the lesson draws again whatever is drawn"
    fill_lesson(page)  # the page's script asks for the neighbours once nothing has moved for a while
    assert_healthy(page)
    for step, drawn in drawn_charts(page).items():  # Previous and Next show a drawn step at once
        if step in (3, 4, 5):
            assert all(any(title.startswith(start) for title in drawn) for start in STEP_CHARTS[step]), (step, drawn)
        else:
            assert drawn == [], f"step {step} is not drawn: a control beside the lesson would draw it again"
    [style] = [h.proto.body for h in page.get("html") if ".st-key-lesson_step_" in h.proto.body]
    assert step_shown(page) == 4
    # Before the page's script has set the step the browser shows, the link's step is shown; after, the script's.
    assert 'body:not([data-lesson-step]) [class*="st-key-lesson_step_"]:not(.st-key-lesson_step_4)' in style
    assert all(f'body[data-lesson-step="{step}"] [class*="st-key-lesson_step_"]:not(.st-key-lesson_step_{step})'
               in style for step in range(1, LAST + 1))
    assert style.endswith("{display: none}</style>")
    page.button(key="lesson_next_foot_4").click().run()
    assert step_shown(page) == 5
    assert page.button(key="lesson_next").disabled is False and page.query_params["step"] == "5"
    assert steps_with_charts(page) == [5], "the step moved to is drawn alone, its neighbours later"
    assert steps_with_charts(fill_lesson(page)) == [4, 5, 6]
    page.segmented_control(key="step").set_value(1).run()
    assert steps_with_charts(fill_lesson(page)) == [1, 2]


def test_an_ask_for_the_neighbours_of_a_run_another_followed_draws_the_step_alone():
    """The script asks for the neighbours of the run it was drawn in; a press that reran the page since drew its
    step alone, and the late ask draws that step alone again (its own script asks anew)."""
    page = run_lesson(step="4")
    asked_for = page.session_state[RUNS]  # the run the script was drawn in
    page.slider(key="head").set_value(1).run()  # a press, whose run came before the ask's
    assert steps_with_charts(fill_lesson(page, asked_for)) == [4]
    assert steps_with_charts(fill_lesson(page)) == [3, 4, 5]


def test_an_ask_that_carries_the_step_the_browser_held_before_next_keeps_the_servers_step():
    """Under load the browser's step selector can still hold the step before a Next when the page's script asks for
    the neighbours; the ask is no move of the reader's, and the step stays the server's."""
    page = run_lesson(step="4")
    page.button(key="lesson_next").click().run()
    page.segmented_control(key="step").set_value(4)  # the value the browser still held
    fill_lesson(page)
    assert_healthy(page)
    assert step_shown(page) == 5 and page.query_params["step"] == "5"
    assert steps_with_charts(page) == [4, 5, 6]


def steps_with_charts(page: AppTest) -> list[int]:
    return [step for step, drawn in drawn_charts(page).items() if drawn]


def test_a_word_picked_in_step_1_is_the_word_step_10_compares():
    page = run_lesson(step="1", text="the bank of the river")
    word_picker(page).set_value("river").run()
    assert_healthy(page)
    page.segmented_control(key="step").set_value(10).run()
    last = page.get_by_key(step_key(10))
    assert last.selectbox(key=word_key("context")).value == "river"
    assert [chart_title(c) for c in last.get("vega_lite_chart")] == ["Cosine similarity of “river” in sentence A "
                                                                      "and sentence B"]


def test_a_step_beyond_every_lesson_falls_back_to_the_first_with_a_notice():
    page = run_lesson(step="14")
    assert_healthy(page)
    assert "step=`14` was ignored: it must be from 1 to 13" in "\n".join(w.value for w in page.warning)
    assert step_shown(page) == 1


def test_step_1_the_same_word_has_the_same_token_embedding(bundled):
    page = run_lesson(step="1", text_b="fruit flies like a banana")
    assert current(page).metric[0].value == "0"
    shown = matrix_on_screen(page, "One token, two sentences")  # (3, C): A, B, A − B
    expected = trace_of(bundled)["token embeddings"][0, 2]  # "flies" in "time flies like an arrow"
    np.testing.assert_array_equal(shown[0], expected)
    np.testing.assert_array_equal(shown[1], shown[0])
    assert not shown[2].any()
    assert "exactly 0" in prose(page)
    ids = html_table(page, "lesson-ids")
    assert ids["id"].tolist() == encode(bundled, TEXT, "fruit flies like a banana").input_ids[0].tolist()


def test_step_2_identity_scores_peak_on_the_diagonal(bundled):
    page = run_lesson(step="2")
    expected = trace_of(bundled, source="identity", scaling="none")["scores"][0]
    np.testing.assert_allclose(matrix_on_screen(page, "Scores E·Eᵀ"), expected, rtol=1e-6)
    assert (expected.argmax(axis=1) == np.arange(7)).all()
    assert "In 7 of 7 rows the largest score is the token's score with itself" in prose(page)


def test_step_2s_table_says_identity_not_a_split_of_trained_projections():
    page = run_lesson(step="2")
    assert_healthy(page)
    [table] = [m.value for m in current(page).markdown if m.value.startswith("| step | shape | formula |")]
    rows = {cells[0].strip("` "): cells[2].strip("` ") for line in table.splitlines()[2:]
            for cells in [line.strip("|").split("|")]}
    assert rows["Q"] == "Q = X: Q = K = V (identity, one head of d = C)"
    assert "split" not in table and "W_q" not in table


def panel_lists(page: AppTest) -> dict[int, str]:
    """The shapes panel beside the lesson: each step's list, by step (the browser shows the one of its step)."""
    [panel] = [h.proto.body for h in page.get("html") if 'data-testid="shapes-panel"' in h.proto.body]
    lists = re.findall(r'<div class="for-steps" data-steps="([\d ]+)">(.*?)</div>', panel)
    assert lists, "one list a set of steps"
    return {int(step): html.unescape(body) for steps, body in lists for step in steps.split()}


def test_the_shapes_panel_beside_step_2_describes_the_identity_unscaled_and_the_others_the_trained_head():
    page = run_lesson(step="2", layer="1", head="4")
    assert_healthy(page)
    lists = panel_lists(page)
    assert set(lists) == set(range(1, LAST + 1))
    assert "Q = X (identity: no W_q, no b_q)" in lists[2] and "scores / 1" in lists[2]
    assert "√d_k" not in lists[2] and "(1, 7, 384)" in lists[2]
    for step in (3, 4, 5, 6, 7, 8, 9, 10, 11):
        assert "scores / √d_k = √32" in lists[step] and "Q = Q split[:, 4]" in lists[step], step
    [panel] = [h.proto.body for h in page.get("html") if 'data-testid="shapes-panel"' in h.proto.body]
    # the browser shows step 2's list when it shows step 2 (lesson_nav's script sets the body's attribute)
    assert 'body[data-lesson-step="2"] .aa-shapes .for-steps[data-steps~="2"]' in panel
    assert 'body:not([data-lesson-step]) .aa-shapes .for-steps[data-steps~="2"]' in panel


def test_beside_a_random_source_the_panel_of_a_trained_step_is_the_trained_heads():
    page = run_lesson(step="3", source="random", head_dim="24", head="14")
    assert_healthy(page)
    assert "Q = Q split[:, 11]" in panel_lists(page)[3] and "√d_k = √32" in panel_lists(page)[3]


def test_step_3_shows_this_heads_projections(bundled):
    page = run_lesson(step="3", layer="2", head="5")
    trace = trace_of(bundled, layer=2, head=5)
    for letter in "QKV":
        np.testing.assert_allclose(matrix_on_screen(page, letter), trace[letter][0], atol=1e-6)
        assert said_of(page, f"{letter}, layer 2, head 5: "), "the chart's words name its layer and head"
    assert "| `Q split` | `(1, 12, 7, 32)` |" in prose(page)
    wins = int((trace["scores"][0].argmax(axis=1) == np.arange(7)).sum())
    assert f"holds a row's largest score in {wins} of 7 rows" in prose(page)


@pytest.mark.parametrize("scaling", ["sqrt", "none"])
def test_step_5_rows_of_weights_sum_to_one(scaling, bundled):
    page = run_lesson(step="5", head="3", scaling=scaling)
    assert_healthy(page)
    table = html_table(page, "lesson-row-sums")
    np.testing.assert_allclose(table["row sum"], 1.0, atol=1e-6)
    weights = trace_of(bundled, head=3, scaling=scaling)["weights"][0]
    np.testing.assert_allclose(table["largest weight"], weights.max(axis=1), atol=1e-6)
    np.testing.assert_allclose(matrix_on_screen(page, "Weights = softmax(scaled)"), weights, atol=1e-6)
    assert ("Scaling divides the scores by 5.657" in prose(page)) == (scaling == "sqrt")


def test_step_6_weights_are_the_traced_heads(bundled):
    page = run_lesson(step="6", layer="3", head="7")
    trace = trace_of(bundled, layer=3, head=7)
    np.testing.assert_allclose(matrix_on_screen(page, "Weights"), trace["weights"][0], atol=1e-6)
    assert said_of(page, "Weights, layer 3, head 7: ")
    np.testing.assert_allclose(matrix_on_screen(page, "Context = weights · V"), trace["context"][0], atol=1e-6)


def test_step_7_what_moves_is_each_weight_times_what_its_key_offers(bundled):
    """α·‖f(x)‖ on the screen equals the same from transformers' own modules, and the words' shares are the
    screen's numbers: [CLS] takes much of layer 3's weight and little of what it moves."""
    page = run_lesson(step="7", layer="3", head="2")
    assert_healthy(page)
    weights = trace_of(bundled, layer=3, head=2)["weights"][0]  # (T, T)
    amounts = bert_reference(bundled, TEXT, 3)[2]  # (T, T)
    np.testing.assert_allclose(matrix_on_screen(page, "Weights α"), weights, atol=1e-6)
    assert said_of(page, "Weights α, head 2: ")
    np.testing.assert_allclose(matrix_on_screen(page, "What moves α·‖f(x)‖"), amounts, rtol=1e-4, atol=1e-5)
    offered = matrix_on_screen(page, "What each key offers")[0]  # (T,)
    np.testing.assert_allclose(offered * weights[0], amounts[0], rtol=1e-4, atol=1e-5)
    weight_share, moved_share = weights[:, 0].sum() / weights.sum(), amounts[:, 0].sum() / amounts.sum()
    assert moved_share < weight_share / 2
    assert (f"This head puts {weight_share:.0%} of its weight on `[CLS]` and takes {moved_share:.0%} of what it "
            "moves from it") in prose(page)
    assert "over half of their attention on [SEP]" in prose(page)


def test_step_7_on_gpt2_names_the_first_token_as_its_sink(tiny_gpt2_checkpoint, tiny_gpt2_model, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    page = run_lesson(step="7", model=str(tiny_gpt2_checkpoint), text="the cat sat on the mat")
    assert_healthy(page)
    first = encode(tiny_gpt2_model, "the cat sat on the mat").tokens[0][0]
    assert prose(page).count("of its weight on `") == 1, "one sink: the first token"
    assert f"of its weight on `{first}`" in prose(page)


def test_step_8_concatenates_all_heads_and_projects_them_back(bundled):
    page = run_lesson(step="8", head="4")
    trace = trace_of(bundled, head=4)
    np.testing.assert_allclose(matrix_on_screen(page, "Concatenated contexts"), trace["concat"][0], atol=1e-6)
    np.testing.assert_allclose(matrix_on_screen(page, "Output = concat"), trace["output"][0], atol=1e-6)
    assert "| `concat` | `(1, 7, 384)` |" in prose(page)
    assert "Columns 128 to 159 are head 4's context" in prose(page)


def test_step_10_similarity_of_flies_falls_layer_by_layer(bundled):
    page = run_lesson(step="10", text_b="fruit flies like a banana")
    assert word_picker(page).value == "flies"
    shown = chart_values(chart(page, "Cosine similarity of “flies”")).sort_values("layer")
    first, second = encode(bundled, "time flies like an arrow"), encode(bundled, "fruit flies like a banana")
    expected = similarity_by_layer(first, 2, second, 2)
    np.testing.assert_allclose(shown["similarity"], expected, atol=1e-6)
    assert shown["similarity"].iloc[0] == pytest.approx(1.0, abs=1e-6)
    assert shown["similarity"].iloc[-1] < 0.9
    assert "the sidebar's two texts" in captions(page)


def test_step_10_picks_the_shared_word_that_is_not_a_stop_word_and_the_reader_can_pick_another(bundled):
    page = run_lesson(step="10", text="the bank of the river", text_b="the bank raised rates")
    assert_healthy(page)
    picker = word_picker(page)
    assert picker.options == ["the", "bank"] and picker.value == "bank"
    first, second = encode(bundled, "the bank of the river"), encode(bundled, "the bank raised rates")
    shown = chart_values(chart(page, "Cosine similarity of “bank”")).sort_values("layer")
    np.testing.assert_allclose(shown["similarity"], similarity_by_layer(first, 2, second, 2), atol=1e-6)
    picker.set_value("the").run()
    assert_healthy(page)
    shown = chart_values(chart(page, "Cosine similarity of “the”")).sort_values("layer")
    np.testing.assert_allclose(shown["similarity"], similarity_by_layer(first, 1, second, 1), atol=1e-6)


@pytest.mark.parametrize("step", ["1", "10"])
def test_with_no_second_sentence_steps_1_and_10_work_on_the_students_own_text(step, bundled):
    page = run_lesson(step=step, text="the bank of the river")
    assert_healthy(page)
    picker = word_picker(page)
    assert picker.options == ["the", "bank", "of", "river"] and picker.value == "bank"
    said = captions(page)
    assert "B is the word on its own" in said and "“Second sentence (optional)” box" in said
    own, alone = encode(bundled, "the bank of the river"), encode(bundled, "bank")
    if step == "1":
        shown = matrix_on_screen(page, "One token, two sentences")  # (3, C): A, B, A − B
        np.testing.assert_array_equal(shown[0], trace_of(bundled, "the bank of the river")["token embeddings"][0, 2])
        assert not shown[2].any()
    else:
        shown = chart_values(chart(page, "Cosine similarity of “bank”")).sort_values("layer")
        np.testing.assert_allclose(shown["similarity"], similarity_by_layer(own, 2, alone, 1), atol=1e-6)
    word_picker(page).set_value("river").run()
    assert_healthy(page)
    if step == "1":
        shown = matrix_on_screen(page, "One token, two sentences")
        np.testing.assert_array_equal(shown[0], trace_of(bundled, "the bank of the river")["token embeddings"][0, 5])
    else:
        chart(page, "Cosine similarity of “river”")


def test_a_text_with_no_whole_word_falls_back_to_the_notebooks_pair():
    page = run_lesson(step="10", text="?!")
    assert_healthy(page)
    chart(page, "Cosine similarity of “flies”")
    assert "no whole word to compare" in captions(page)


def test_other_sources_still_show_the_trained_head():
    page = run_lesson(step="3", source="random", head_dim="24", head="14")
    assert_healthy(page)
    chart(page, "Q")
    assert said_of(page, "Q, layer 0, head 11: ")
    assert "whatever the source chosen beside this view" in captions(page)


def test_typed_text_reaches_the_markdown_only_inside_code_spans():
    typed = {"text": "**bold** <b>x</b> flies", "text_b": "[link](http://e.x) flies"}
    page = run_lesson(step="1", **typed)
    assert_healthy(page)
    markdown = prose(page)
    for text in typed.values():
        assert markdown.count(text) == markdown.count(f"`{text}`") == 1


def in_page_order(block) -> list:
    """A block's elements top to bottom, as the browser stacks them."""
    return [node for node in block if not hasattr(node, "children") or not node.children]


@pytest.mark.parametrize("step", [1, 4, LAST])
def test_previous_and_next_stand_at_the_foot_of_the_step_too_after_its_explanation(step):
    page = run_lesson(step=str(step))
    assert_healthy(page)
    order = in_page_order(current(page))
    explanation = max(index for index, node in enumerate(order) if node.type == "markdown"
                      and not node.value.startswith("| ") and not node.value.startswith("- ["))
    keys = (f"lesson_prev_foot_{step}", f"lesson_next_foot_{step}")
    foot = [index for index, node in enumerate(order) if getattr(node, "key", None) in keys]
    assert len(foot) == 2 and min(foot) > explanation, "both buttons, under the step's last words"
    assert page.button(key=keys[0]).disabled == (step == 1)
    assert page.button(key=keys[1]).disabled == (step == LAST)


def test_the_buttons_at_the_foot_move_the_step_and_the_url():
    page = run_lesson(step="3")
    page.button(key="lesson_next_foot_3").click().run()
    assert_healthy(page)
    assert (step_shown(page), page.query_params["step"]) == (4, "4")
    page.run()  # the whole page again: AppTest's tree after a fragment's rerun holds that fragment alone
    assert step_shown(page) == 4
    page.button(key="lesson_prev_foot_4").click().run()
    page.run()
    page.button(key="lesson_prev_foot_3").click().run()
    assert step_shown(page) == 2
    assert not page.button(key="lesson_prev").disabled


def test_the_last_step_ends_with_links_onward_that_keep_the_text():
    page = run_lesson(step=str(LAST), text="what if (it) [rains]", layer="2")
    assert_healthy(page)
    last = current(page).markdown[-1].value
    links = dict(re.findall(r"\[([^\]]+)\]\((\?[^)]*)\)", last))
    assert set(links) == {view.label for view in VIEWS if view.name != "lesson"}, "every other view of the page"
    assert all(view.purpose for view in VIEWS if view.name != "lesson"), "and a line for each, to say what it is for"
    for view in VIEWS:
        if view.name != "lesson":
            assert f"]: {view.purpose}." in last or f"): {view.purpose}." in last, view.name
    for name, view in {"One head": "head", "All heads of a layer": "heads", "Scaling lab": "lab"}.items():
        query = urllib.parse.parse_qs(links[name][1:])
        assert query.get("view", ["head"]) == [view], "one head is the page's default view"
        assert (query["text"], query["layer"]) == (["what if (it) [rains]"], ["2"])
        assert "step" not in query, "the lesson's step stays behind"


def test_step_7_explains_in_short_parts_not_one_paragraph():
    """Its explanation ran to one paragraph of ten lines: what the keys offer, each sink, the layer, two papers."""
    page = run_lesson(step="7")
    assert_healthy(page)
    words = [m.value for m in current(page).markdown if not m.value.startswith("| ")]
    parts = [line for block in words for line in block.splitlines() if line.strip()]
    assert len(parts) >= 6 and max(len(part) for part in parts) <= 300, parts
    assert sum(part.startswith("- ") for part in parts) >= 4


def test_step_4_bert_looks_both_ways_and_a_causal_what_if_zeroes_the_upper_triangle(bundled):
    page = run_lesson(step="4", layer="1", head="3")
    assert_healthy(page)
    assert not matrix_on_screen(page, "Mask: 1 = may look").min() < 1, "BERT's own mask hides padding only"
    assert "BERT's own mask hides padding only" in prose(page)
    causal = run_lesson(step="4", layer="1", head="3", mask="causal")
    assert_healthy(causal)
    weights = matrix_on_screen(causal, "Weights = softmax(scaled + M)")
    expected = trace_of(bundled, layer=1, head=3, mask="causal")["weights"][0]
    np.testing.assert_allclose(weights, expected, atol=1e-6)
    assert np.triu(weights, 1).max() == 0.0
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-5)
    assert "(a what-if)" in prose(causal) and "21 of 49 cells are −∞" in prose(causal)


def test_step_4_on_gpt2_the_first_token_looks_at_itself_only(tiny_gpt2_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    page = run_lesson(step="4", model=str(tiny_gpt2_checkpoint))
    assert_healthy(page)
    mask = matrix_on_screen(page, "Mask: 1 = may look")
    np.testing.assert_array_equal(mask, np.tril(np.ones_like(mask)))
    assert "GPT-2's own mask hides every key after its query" in prose(page)
    assert "the attention sink" in prose(page)


@pytest.mark.parametrize("step", range(1, LAST + 1))
def test_every_step_draws_on_gpt2(step, tiny_gpt2_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    page = run_lesson(step=str(step), model=str(tiny_gpt2_checkpoint))
    assert_healthy(page)
    assert step_shown(page) == step


def test_step_1_on_gpt2_compares_a_whole_word_with_itself_read_alone(tiny_gpt2_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    page = run_lesson(step="1", model=str(tiny_gpt2_checkpoint), text="the cat sat on the mat")
    assert_healthy(page)
    picker = word_picker(page)
    assert picker.options == ["␣cat", "␣sat", "␣on", "␣the"] and picker.value == "␣cat"
    assert current(page).metric[0].value == "0"
    assert "exactly 0" in prose(page)
