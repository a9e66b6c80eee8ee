"""A learner's own text never becomes part of a chart's code: every chart of every view, drawn by Vega itself.

The texts hold words that name Vega's expression functions and keywords ("if", "length", "datum", …) and
characters that mean something to Vega's expressions, JSON, HTML and Markdown. A token written into an
axis's expression stopped Vega's parser ("Unrecognized signal name: \"if\"") and the heatmap was not drawn,
with no message. vl-convert runs the same Vega as the browser: a chart it cannot draw fails here.
"""

from __future__ import annotations

import pytest

from tests import rendered
from tests.pages import assert_healthy, chart_title, charts, open_page

# Short: drawn as cells. Every word of it named something to Vega or to a parser that read the labels.
HOSTILE = ('what if it rains? "quoted" it\'s \\back <b>bold</b> </script> ${x} {{y}} datum item event this '
           'length data scale now random abs pi format else null true NaN')
# Long enough (> 64 tokens) that its heatmaps are drawn as pictures, under the same kind of axes.
LONG_HOSTILE = " ".join([HOSTILE] * 3)
PAIR = "what if it snows"

VIEWS = [
    ("head", {}),
    ("heads", {}),
    ("neuron", {}),
    ("compare", {"text_b": PAIR}),
    ("lab", {}),
    *[("lesson", {"step": str(step)}) for step in range(1, 9)],
    ("atlas", {"atlas": "text"}),
    ("block", {}),
]
# Short enough for the tiny GPT-2's 128 positions with new tokens after it: the views of a model with a head.
DECODER_HOSTILE = 'what if <b>"datum"</b> ${x} {{y}} \\back else'



def every_chart_is_drawn(page) -> list[str]:
    """The titles of the page's charts, each drawn by Vega (rendered.svg raises on a chart it cannot draw)."""
    drawn = []
    for chart in charts(page):
        assert "<svg" in rendered.svg(chart), chart_title(chart)
        drawn.append(chart_title(chart))
    return drawn


@pytest.mark.parametrize(("view", "query"), VIEWS, ids=[f"{v}-{q.get('step', '')}" for v, q in VIEWS])
def test_every_chart_of_a_view_is_drawn_whatever_the_text_holds(view, query):
    page = open_page(view=view, text=HOSTILE, **query)
    assert_healthy(page)
    assert every_chart_is_drawn(page), "the view draws at least one chart"


@pytest.mark.parametrize("view", ["lens", "generate"])
def test_every_chart_of_a_view_of_a_decoder_is_drawn_whatever_the_text_holds(view, tiny_gpt2_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    page = open_page(view=view, text=DECODER_HOSTILE, model=str(tiny_gpt2_checkpoint))
    assert_healthy(page)
    assert every_chart_is_drawn(page), "the view draws at least one chart"


@pytest.mark.parametrize("stage", ["Attention weights", "Raw scores Q·Kᵀ", "Scaled scores", "Context vectors",
                                   "Weights as lines", "What moves α·‖f(x)‖"])
def test_every_stage_of_one_head_is_drawn_whatever_the_text_holds(stage):
    page = open_page(text=HOSTILE, text_b=PAIR)
    page.segmented_control(key="head_stage").set_value(stage).run()
    assert_healthy(page)
    assert every_chart_is_drawn(page)


@pytest.mark.parametrize("view", ["head", "heads", "compare"])
def test_a_long_texts_pictures_are_drawn_under_its_labels_whatever_the_text_holds(view):
    page = open_page(view=view, text=LONG_HOSTILE, text_b=PAIR if view == "compare" else "")
    assert_healthy(page)
    drawn = rendered.svg(charts(page)[0])
    assert "data:image/png" in drawn, "a long text's heatmap is a picture"
    labels = rendered.label_colours(drawn)
    assert "[CLS]" in labels, "the axes name the tokens"
    assert {"&lt;", "&gt;"} & set(labels), "a < or > of the text is a letter on the axis, not markup"
