"""The mask as a knob and as a stage of the one-head view, through AppTest: links that set it, the what-if it is
on a model trained otherwise, the masked scores drawn grey where they are −∞, the CSV that follows the mask shown,
and the sink tokens hidden, on the bundled BERT and on a tiny GPT-2 offered as a local folder."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from components.caches import settings_for
from components.page.page_state import PageState
from tests.pages import assert_healthy, open_page, warnings


def captions(page: AppTest) -> str:
    return "\n".join(caption.value for caption in page.caption)


def test_a_causal_link_sets_the_mask_and_is_labelled_a_what_if_on_bert():
    page = open_page(mask="causal")
    assert_healthy(page)
    assert page.segmented_control(key="mask").value == "causal"
    assert "What-if: this model was trained with no mask but its padding" in captions(page)
    assert page.query_params["mask"] == "causal", "kept in the link"


def test_the_models_own_mask_is_no_what_if_and_leaves_the_link_alone():
    page = open_page()
    assert_healthy(page)
    assert page.segmented_control(key="mask").value == "model"
    assert "What-if" not in captions(page)
    assert "mask" not in page.query_params and "window" not in page.query_params


def test_a_window_link_draws_the_window_slider_at_its_size():
    page = open_page({"mask": "window", "window": "2"})
    assert_healthy(page)
    assert page.slider(key="window").value == 2
    assert "a window of 2 tokens back" in captions(page)
    page.segmented_control(key="mask").set_value("causal").run()
    assert "window" not in [slider.key for slider in page.slider], "the window's size for the window mask only"


def test_a_bad_mask_or_window_falls_back_with_a_notice():
    page = open_page({"mask": "sideways", "window": "99"})
    assert_healthy(page)
    said = warnings(page)
    assert "mask=`sideways` was ignored" in said and "Showing mask='model'" in said
    assert "window=`99` was ignored" in said and "Showing window=4" in said
    assert page.segmented_control(key="mask").value == "model"


def test_the_windows_size_reaches_the_core_only_under_the_window_mask():
    assert settings_for(PageState(mask="window", window=2)).window == 2
    assert settings_for(PageState(mask="causal", window=2)) == settings_for(PageState(mask="causal")), (
        "equal settings, one cache entry")
