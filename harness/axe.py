"""axe-core, the engine behind most accessibility audits, run over a page in Chromium: its serious and critical
violations of WCAG 2.0/2.1 A and AA (a text's contrast, a chart mark's name, a control's label). And what axe does
not check: that the charts' text alternatives are there to be read and drawn nowhere.

axe.min.js is the one axe-playwright-python ships (requirements-dev.txt), read once and put on a page the first
time it is audited.
"""

from __future__ import annotations

import functools
from pathlib import Path

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
SERIOUS = ("serious", "critical")

_RUN_AXE_JS = """async tags => (await axe.run(document, {runOnly: {type: 'tag', values: tags},
    resultTypes: ['violations']})).violations.map(rule => ({id: rule.id, impact: rule.impact, help: rule.help,
    nodes: rule.nodes.map(node => ({target: node.target.join(' '), summary: node.failureSummary || ''}))}))"""


@functools.cache
def axe_source() -> str:
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


_CHART_TEXT_BOXES_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] .aa-chart-text')].map(text => {
    const box = text.closest('[data-testid="stElementContainer"]').getBoundingClientRect();
    return [text.textContent.slice(0, 60), box.width, box.height]; })"""


def drawn_chart_texts(page, where: str) -> list[str]:
    """A line for each of the page's chart text alternatives (views/parts/scrubbed.said) that is drawn: its element
    larger than 1 px, where a screen reader should read it and no one see it (page/page_head.css hides them)."""
    return [f"{where}: a chart's text is drawn {width:.0f} × {height:.0f} px: {text!r}"
            for text, width, height in page.evaluate(_CHART_TEXT_BOXES_JS) if width > 1 or height > 1]


def serious_violations(page, where: str) -> list[str]:
    """axe's serious and critical violations on the page as it stands, a line each: where, rule, element, summary."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    return [f"{where}: {rule['id']} ({rule['impact']}: {rule['help']}) at {node['target']}: "
            + " ".join(node["summary"].split())
            for rule in page.evaluate(_RUN_AXE_JS, TAGS) if rule["impact"] in SERIOUS for node in rule["nodes"]]
