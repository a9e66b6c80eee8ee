"""axe-core, the engine behind most accessibility audits, run over a page in Chromium: its serious and critical
violations of WCAG 2.0/2.1 A and AA (a text's contrast, a chart mark's name, a control's label).

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


def serious_violations(page, where: str) -> list[str]:
    """axe's serious and critical violations on the page as it stands, a line each: where, rule, element, summary."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    return [f"{where}: {rule['id']} ({rule['impact']}: {rule['help']}) at {node['target']}: "
            + " ".join(node["summary"].split())
            for rule in page.evaluate(_RUN_AXE_JS, TAGS) if rule["impact"] in SERIOUS for node in rule["nodes"]]
