"""The class's question card in Chromium, as a teacher and students use it (components/classroom/questions.py):
a student's pick of a choice, and the teacher's count of answers."""

from __future__ import annotations

import re

from harness.browser import TAB_TIMEOUT_MS, wait_until_settled

# The outermost card: while a run that follows a fragment's is under way, the fragment's card can stand stale inside
# the run's new one for a moment, and a locator that finds two elements fails at once rather than waiting.
CARD = ".st-key-quiz_card:not(.st-key-quiz_card .st-key-quiz_card)"
# A follower's page reads a change of the round as a change of the class: its watch's next ask, then a run of the
# view, which on 2 busy cores waits its turn behind other sessions (tests/browser/test_class_e2e.py).
FOLLOW_TIMEOUT_MS = TAB_TIMEOUT_MS


def choose(page, label: str) -> None:
    """Pick the choice shown as label on a student's card."""
    page.locator(CARD).get_by_role("radio", name=label, exact=True).click()
    wait_until_settled(page)


def answered(teacher, count: int) -> None:
    """Wait until the teacher's card counts count answers."""
    from playwright.sync_api import expect

    count_line = teacher.locator(CARD).get_by_text(re.compile(rf"^{count} answered"))
    expect(count_line).to_be_visible(timeout=FOLLOW_TIMEOUT_MS)
