"""The page's shapes panel and the views' headings come from the trace's outline, not the trace.

Through AppTest: the panel of every view lists exactly the steps of the trace the core builds for the
page's settings, and the views that show no number of the shown head's own trace (one head, all heads,
neuron, two texts) ask compute for none: their numbers come from the stacks of every head of a layer.
"""

from __future__ import annotations

import dataclasses
import html
import re
import sys

import pytest

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.caches import layers
from components.page import view_list
from tests import pages

TEXT, TEXT_B = "time flies like an arrow", "fruit flies like a banana"
SHOWN_HEAD = 5  # a head no layer-wide stack is keyed on (they key on head 0)
LINKS = {  # page link -> the core's settings for it
    "trained, τ": ({"layer": "2", "head": str(SHOWN_HEAD), "scaling": "temperature", "temperature": "0.5"},
                   TraceSettings(layer=2, head=SHOWN_HEAD, scaling="temperature", temperature=0.5)),
    "random, d = 48": ({"layer": "4", "head": str(SHOWN_HEAD), "source": "random", "head_dim": "48", "seed": "3",
                        "scaling": "linear"},
                       TraceSettings(layer=4, head=SHOWN_HEAD, source="random", head_dim=48, seed=3, scaling="linear")),
}
VIEWS = tuple(view.name for view in view_list.VIEWS if view.shapes)  # the compare view shows no panel


def panel_rows(page) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The panel's stage headings, and (name, shape, formula) of every step it lists, unescaped."""
    [panel] = [element.proto.body for element in page.get("html") if 'data-testid="shapes-panel"' in element.proto.body]
    # Beside the lesson, a list for each set of steps (lesson_steps.step_outlines): the one of step 1, the link's
    for steps, shown in re.findall(r'<div class="for-steps" data-steps="([\d ]+)">(.*?)</div>', panel):
        panel = shown if "1" in steps.split() else panel
    headings = [html.unescape(title) for title in re.findall(r'<p class="stage">(.*?)</p>', panel)]
    items = re.findall(r'<li><code>(.*?)</code> <code>(.*?)</code><br><span class="formula"><code>(.*?)</code>',
                       panel)
    return headings, [tuple(html.unescape(part) for part in item) for item in items]


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("view", VIEWS)
def test_every_views_panel_lists_the_steps_of_the_cores_trace(bundled, view, link):
    query, settings = LINKS[link]
    if view == "lesson":  # its step 1 and the steps after 2 show the trained head, whatever the source
        settings = dataclasses.replace(settings, source="bert", head_dim=None, seed=0)
    page = pages.open_page({**query, "view": view, "text": TEXT, "text_b": TEXT_B})
    pages.assert_healthy(page)
    trace = build_trace(bundled, encode(bundled, TEXT, TEXT_B), settings)
    headings, rows = panel_rows(page)
    assert rows == [(step.name, str(step.shape), step.formula) for step in trace.steps]
    assert headings[0] == "Tokens" and headings[-1] == "All heads together"


@pytest.mark.parametrize(("view", "reads_the_heads_trace"), [
    ("head", False), ("heads", False), ("neuron", False), ("compare", False),
    ("lab", True),  # its τ table shows the shown head's own raw scores: the spy does see a view's trace
])
def test_a_view_that_shows_no_number_of_the_heads_trace_builds_none(monkeypatch, view, reads_the_heads_trace):
    asked: list[TraceSettings] = []
    real_trace = layers.trace

    def trace(name, text, text_b, settings):
        asked.append(settings)
        return real_trace(name, text, text_b, settings)

    for module in list(sys.modules.values()):  # the caches' door and every module of it that calls trace
        if module.__name__.startswith("components.caches") and getattr(module, "trace", None) is real_trace:
            monkeypatch.setattr(module, "trace", trace)
    query, _ = LINKS["trained, τ"]
    page = pages.open_page({**query, "view": view, "text": TEXT, "text_b": TEXT_B})
    pages.assert_healthy(page)
    assert any(settings.head == SHOWN_HEAD for settings in asked) == reads_the_heads_trace, asked
