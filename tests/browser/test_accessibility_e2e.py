"""axe-core over the pages of a decoder in Chromium, normal and in presentation mode, at 1366×768: no serious or
critical violation of WCAG 2.0/2.1 A and AA, and no chart's text alternative drawn (harness/axe.py). The views that
need a decoder (the logit lens, generation) and a GPT-2's block, on a server that offers the tests' tiny GPT-2 beside
the bundled BERT.

Every other view and every step of the lesson are audited on the layout's walk through them
(tests/browser/test_layout_e2e.py), which opens them all anyway.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from harness.axe import drawn_chart_texts, serious_violations
from tests.browser.test_layout_e2e import open_drawn
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS
DECODER_VIEWS = ("lens", "generate", "block")
VIEWPORT = {"width": 1366, "height": 768}  # the page fixture's window (tests/browser/conftest.py)
MODES = {"normal": {}, "present": {"present": "1"}}


@pytest.fixture(scope="module")
def base_url(gpt2_url):
    return gpt2_url


def test_every_decoder_view_has_no_serious_violation(page, base_url, tiny_gpt2_checkpoint):
    found = []
    for mode, extra in MODES.items():
        for view in DECODER_VIEWS:
            open_drawn(page, f"{base_url}/?{urlencode({'view': view, 'model': str(tiny_gpt2_checkpoint), **extra})}")
            found += serious_violations(page, f"{view} (GPT-2), {mode}")
            found += drawn_chart_texts(page, f"{view} (GPT-2), {mode}")
    assert not found, "\n".join(found)
