"""Every chart of every view, stage and lesson step says what it draws to a screen reader: a chart's canvas holds no
text, so each one drawn comes with a paragraph computed from its numbers (views/parts/scrubbed.said; the class's
answers chart, not a view's, names itself instead: tests/classroom/test_answers_text.py). What each says, and that
it is true, is tested beside each chart (tests/page/test_*chart_text*.py); this holds the count: a chart added to a
view without its text fails here."""

from __future__ import annotations

import re

import pytest

from components.page.page_state import HEAD_STAGES
from components.page.view_list import VIEWS
from tests.pages import TEXT, assert_healthy, charts, open_page

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

LESSON_STEPS = 11
BERT_LINKS = {
    **{view.name: {"view": view.name} for view in VIEWS if view.name not in ("lens", "generate")},
    "compare": {"view": "compare", "text_b": "fruit flies like a banana"},
    **{f"head, {stage}": {"view": "head", "head_stage": stage} for stage in HEAD_STAGES if stage != "rotation"},
    **{f"lesson, step {step}": {"view": "lesson", "step": str(step)} for step in range(1, LESSON_STEPS + 1)},
}


def assert_every_chart_speaks(page) -> None:
    assert_healthy(page)
    drawn = charts(page)
    paragraphs = sum(len(re.findall(r'class="aa-chart-text"', element.proto.body)) for element in page.get("html"))
    assert drawn, "the view draws a chart"
    assert paragraphs >= len(drawn), f"{len(drawn)} charts and {paragraphs} text alternatives"


@pytest.mark.parametrize("link", list(BERT_LINKS.values()), ids=list(BERT_LINKS))
def test_every_chart_of_the_bundled_models_views_has_a_text_alternative(link):
    assert_every_chart_speaks(open_page({"text": TEXT, **link}))


@pytest.mark.parametrize("view", ["lens", "generate", "block", "head"])
def test_every_chart_of_a_decoders_views_has_a_text_alternative(view, tiny_gpt2_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    assert_every_chart_speaks(open_page(view=view, model=str(tiny_gpt2_checkpoint), text="what if it rains"))


def test_the_rotation_stage_of_a_llama_says_both_its_charts(llama_link):
    assert_every_chart_speaks(open_page({**llama_link, "view": "head", "head_stage": "rotation"}))
