"""The one-head view's reading guide through AppTest: under each stage, what is true of that stage's chart.

"Every full row sums to 1" stood under all five stages, false for the scores (any number), the scaled scores
and the context vectors (whose columns are the head's dimensions, not key tokens).
"""

from __future__ import annotations

import re
import urllib.parse

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from tests.pages import TEXT, assert_healthy, open_page

STAGES = {"weights": "Attention weights", "scores": "Raw scores Q·Kᵀ", "scaled": "Scaled scores",
          "masked": "Masked scores", "context": "Context vectors", "lines": "Weights as lines",
          "moved": "What moves α·‖f(x)‖"}


def on_stage(stage: str, **query: str) -> AppTest:
    page = open_page({"layer": "2", "head": "5", **query})
    page.segmented_control(key="head_stage").set_value(STAGES[stage]).run()
    assert_healthy(page)
    return page


def guide(page: AppTest) -> str:
    """The reading guide of the chart shown: the one text that starts "Reading it"."""
    [text] = [markdown.value for markdown in page.markdown if markdown.value.startswith("**Reading it:**")]
    return text


def everything_said(page: AppTest) -> str:
    return "\n".join(element.value for element in [*page.markdown, *page.caption])


def largest(bundled, stage: str, **settings) -> float:
    """The largest |value| of one stage of layer 2, head 5: the end of its legend."""
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=2, head=5, **settings))
    return float(np.abs(trace[stage][0]).max())


def test_the_weights_guide_says_rows_sum_to_one():
    text = guide(on_stage("weights"))
    assert "each row is one query token" in text and "sum to 1" in text


@pytest.mark.parametrize("stage", ["scores", "scaled", "masked", "context", "lines", "moved"])
def test_no_stage_but_the_weights_is_read_as_rows_of_weights_over_key_tokens(stage):
    said = everything_said(on_stage(stage))
    assert "spreads its attention over the key tokens" not in said
    assert "Every full row sums to 1" not in said


@pytest.mark.parametrize("stage", ["scores", "scaled"])
def test_the_scores_guides_say_rows_do_not_sum_to_one_and_give_both_ends(stage, bundled):
    text = guide(on_stage(stage))
    assert "no row sums to 1" in text
    raw, scaled = largest(bundled, "scores"), largest(bundled, "scaled")
    assert f"from {raw:.3g} to {scaled:.3g}" in text, "the legend's ends of Q·Kᵀ and of Scaled, this head's"
    assert "√d_k = √32 ≈ 5.66" in text, "the scaling chosen, with its number"
    assert "each stage has its own colour scale" in text, "why the two pictures look the same"


def test_the_scaled_guide_names_the_scaling_chosen(bundled):
    assert "d_k = 32" in guide(on_stage("scaled", scaling="linear"))
    tau = guide(on_stage("scaled", scaling="temperature", temperature="2.5"))
    assert "τ = 2.5" in tau
    raw = largest(bundled, "scores", scaling="none")
    plain = guide(on_stage("scaled", scaling="none"))
    assert "No scaling is chosen" in plain and f"{raw:.3g}" in plain


def test_the_scores_guide_links_to_the_scaling_lab_with_the_same_text_and_settings():
    link = re.search(r"\[the scaling lab\]\((\?[^)]*)\)", guide(on_stage("scores", text="what if (it) [rains]")))
    assert link, "a Markdown link, whole: the reader's brackets and parentheses are percent-encoded"
    query = urllib.parse.parse_qs(link.group(1)[1:])
    assert query["view"] == ["lab"] and query["text"] == ["what if (it) [rains]"]
    assert (query["layer"], query["head"]) == (["2"], ["5"])


def test_the_context_guide_reads_rows_as_weighted_sums_and_columns_as_dimensions():
    text = guide(on_stage("context"))
    assert "context vector" in text and "value vectors" in text
    assert "32 columns are the head's 32 dimensions, not tokens" in text


def test_the_lines_guide_reads_opacity_as_weight():
    assert "a line's opacity is its weight" in guide(on_stage("lines"))


@pytest.mark.parametrize(("query", "says"), [
    ({"text_b": "fruit flies like a banana", "pair": "a_to_b"}, "at most 1 together"),
    ({"text_b": "fruit flies like a banana", "pair": "a_to_b", "hide_special": "1"}, "sum to 1 over the keys shown"),
    ({"hide_special": "1"}, "rescaled to sum to 1."),
])
def test_a_block_of_a_pair_is_not_said_to_sum_to_one_unless_rescaled(query, says):
    assert says in guide(on_stage("weights", **query))
