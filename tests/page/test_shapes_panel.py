"""The shapes panel's HTML: every step of a real trace in order, and nothing in it read as markup."""

from __future__ import annotations

import html
import re

import numpy as np

from attention.dissect.trace import Step, build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.page.shapes_panel import STAGE_TITLES, shapes_html

LETTERS = "B batch · T tokens"


def listed(panel: str) -> list[tuple[str, str, str]]:
    """(name, shape, formula) of every list item, unescaped."""
    items = re.findall(r'<li><code>(.*?)</code> <code>(.*?)</code><br><span class="formula"><code>(.*?)</code>',
                       panel)
    return [tuple(html.unescape(part) for part in item) for item in items]


def test_every_step_of_a_real_trace_is_listed_with_its_shape_and_formula(bundled):
    trace = build_trace(bundled, encode(bundled, "time flies like an arrow"), TraceSettings(layer=2, head=5))
    expected = [(step.name, str(step.shape), step.formula) for step in trace.steps]
    panel = shapes_html(trace.steps, LETTERS)
    assert listed(panel) == expected
    assert ("Q", "(1, 7, 32)", "Q = Q split[:, 5]") in expected
    headings = re.findall(r'<p class="stage">(.*?)</p>', panel)
    assert headings == [title for stage, title in STAGE_TITLES.items() if any(s.stage == stage for s in trace.steps)]


def test_markup_in_a_step_is_shown_as_text():
    hostile = "<img src=x onerror=alert(1)>"
    steps = [Step(name=hostile, stage="head", formula=f"{hostile} & more", value=np.zeros((1, 2)))]
    panel = shapes_html(steps, f"{hostile} letters")
    assert "<img" not in panel
    assert listed(panel) == [(hostile, "(1, 2)", f"{hostile} & more")]
