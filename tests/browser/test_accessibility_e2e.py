"""axe-core, the engine behind most accessibility audits, over the page in Chromium: every view (normal and in
presentation mode) and every step of the lesson, at 1366×768, with no serious or critical violation of WCAG 2.0/2.1
A and AA (a text's contrast, a chart mark's name, a control's label).

axe.min.js is the one axe-playwright-python ships (requirements-dev.txt). One server offers the tests' tiny GPT-2 as
well as the bundled BERT, for the views that need a decoder (the logit lens, generation) and the block of a GPT-2;
one tab goes from link to link, and the lesson is walked with Next, as a learner does.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from components.page.view_list import VIEW_NAMES
from tests.browser.test_layout_e2e import LESSON_STEPS, open_drawn, wait_until_drawn
from tests.marks import BROWSER_TESTS

pytestmark = [*BROWSER_TESTS, pytest.mark.long]  # some two minutes in all on a busy 2-core machine
VIEWPORT = {"width": 1366, "height": 768}
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
SERIOUS = ("serious", "critical")
DECODER_VIEWS = ("lens", "generate")  # they need a decoder: the bundled BERT has none
MODES = {"normal": {}, "present": {"present": "1"}}

_RUN_AXE_JS = """async tags => (await axe.run(document, {runOnly: {type: 'tag', values: tags},
    resultTypes: ['violations']})).violations.map(rule => ({id: rule.id, impact: rule.impact, help: rule.help,
    nodes: rule.nodes.map(node => ({target: node.target.join(' '), summary: node.failureSummary || ''}))}))"""


@pytest.fixture(scope="module")
def axe_source() -> str:
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def base_url(gpt2_url):
    return gpt2_url


def view_links(decoder: Path) -> dict[str, dict[str, str]]:
    """Every view's default link (the bundled BERT), the decoders' views on the tiny GPT-2, and a GPT-2's block."""
    links = {view: {"view": view} for view in VIEW_NAMES if view not in DECODER_VIEWS}
    links |= {f"{view} (GPT-2)": {"view": view, "model": str(decoder)} for view in (*DECODER_VIEWS, "block")}
    return links


def serious_violations(page, axe_source: str, where: str) -> list[str]:
    """axe's serious and critical violations on the page as it stands, a line each: where, rule, element, summary."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source)
    return [f"{where}: {rule['id']} ({rule['impact']}: {rule['help']}) at {node['target']}: "
            + " ".join(node["summary"].split())
            for rule in page.evaluate(_RUN_AXE_JS, TAGS) if rule["impact"] in SERIOUS for node in rule["nodes"]]


# The presentation layout in a group of its own, which another worker may take (tests/conftest.py): the views twice
# over on one worker were two minutes of a CI run.
@pytest.mark.parametrize("mode", [pytest.param(mode, marks=[pytest.mark.xdist_group(f"accessibility-{mode}")]
                                               if mode == "present" else []) for mode in MODES])
def test_every_view_has_no_serious_violation(page, base_url, axe_source, tiny_gpt2_checkpoint, mode):
    found = []
    for name, link in view_links(tiny_gpt2_checkpoint).items():
        open_drawn(page, f"{base_url}/?{urlencode({**link, **MODES[mode]})}")
        found += serious_violations(page, axe_source, f"{name}, {mode}")
    assert not found, "\n".join(found)


def test_every_lesson_step_has_no_serious_violation(page, base_url, axe_source):
    found = []
    open_drawn(page, f"{base_url}/?view=lesson&step=1")
    for step in range(1, LESSON_STEPS + 1):
        if step > 1:
            page.locator(".st-key-lesson_next button").click()
            page.get_by_text(f"Step {step} of {LESSON_STEPS}:").wait_for()
            wait_until_drawn(page)
        found += serious_violations(page, axe_source, f"lesson step {step}")
    assert not found, "\n".join(found)
