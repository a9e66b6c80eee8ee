"""How long a class's followers take to show the teacher's move while other readers of the same server open heavy
views: a teacher and STUDENTS students in Chromium (two by default, as tests/browser/test_class_e2e.py has them;
every other one at a phone's size), on one server. Real pages, each its own browser context, so that the page's
own script asks the route (components/classroom/class_watch.js); bench/class_follow.py takes thirty followers
over websockets, which real pages on 2 cores could not.

The teacher presses its one-head chart's Head input MOVES times. For each move, the time from the teacher's link
showing the head (its run has sent the view to the class) to each student's chart input showing it. Twice: with
nobody else on the server, then with STRANGERS other tabs opening views of texts of about 490 tokens the server has
not seen, opened STRANGERS_AHEAD_MS before each press (what the suite's other workers do to the shared browser-test
server).

A follower's watch hears of the move as the class has it (the route holds its ask: components/server/class_waits.py)
and asks for a run at once; the run then draws the view, which waits its turn for a page slot
(caches.work.PAGE_SLOTS, PAGE_WAIT_S) behind the strangers' views.

    python -m bench.class_busy_follow [moves] [students]      (defaults: 6 moves, 2 students)

Prints, asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from urllib.parse import parse_qs, quote_plus, urlsplit

from bench.report import machine
from harness.browser import chart_input_readout, launch_chromium, load_page, open_tab, press_chart_key
from harness.classroom import long_text
from harness.server import APP, streamlit_server

TEXT = "the teacher moves one head and the class follows"
STRANGER_VIEWS = ("heads", "neuron", "heads", "switch")  # each with a text of its own, new to the server
STRANGERS_AHEAD_MS = 3_000  # the strangers' pages open this long before the teacher presses
FOLLOW_LIMIT_S = 90.0  # a move no student shows in this long is reported as not followed
TEACHER, PHONE = {"width": 1280, "height": 720}, {"width": 390, "height": 844}


def head_in_link(page) -> str:
    return parse_qs(urlsplit(page.url).query).get("head", ["0"])[-1]


def follow_times(teacher, students, head: int) -> list[float | None]:
    """Seconds from now (the teacher's link shows head) until each student's chart input shows it; None past
    FOLLOW_LIMIT_S."""
    start, shown = time.monotonic(), [None] * len(students)
    while None in shown and time.monotonic() - start < FOLLOW_LIMIT_S:
        for index, student in enumerate(students):
            if shown[index] is None and chart_input_readout(student, "head").inner_text() == str(head):
                shown[index] = time.monotonic() - start
        teacher.wait_for_timeout(50)
    return shown


def run(browser, base_url: str, moves: int, count: int, strangers: bool, first_text: int) -> list[float | None]:
    """One class of count students on base_url; the students' follow times of every move."""
    teacher = open_tab(browser, viewport=TEACHER)
    students = [open_tab(browser, **({"viewport": PHONE} if index % 2 else {})) for index in range(count)]
    others = []
    try:
        load_page(teacher, f"{base_url}/?teach=1&text={quote_plus(TEXT)}")
        code = parse_qs(urlsplit(teacher.url).query)["class"][-1]
        for student in students:
            load_page(student, f"{base_url}/?class={code}")
        times = []
        for move in range(1, moves + 1):
            if strangers:  # their pages load and their runs start while the teacher moves
                for index, view in enumerate(STRANGER_VIEWS):
                    other = open_tab(browser)
                    others.append(other)
                    text = long_text(first_text + move * len(STRANGER_VIEWS) + index)
                    other.goto(f"{base_url}/?view={view}&text={quote_plus(text)}", wait_until="commit")
                teacher.wait_for_timeout(STRANGERS_AHEAD_MS)
            press_chart_key(teacher, "head")
            teacher.wait_for_url(lambda url, head=move: parse_qs(urlsplit(url).query).get("head") == [str(head)],
                                 timeout=FOLLOW_LIMIT_S * 1000)
            times += follow_times(teacher, students, move)
            while others:
                others.pop().context.close()
        return times
    finally:
        for page in (teacher, *students, *others):
            page.context.close()


def summary(times: list[float | None]) -> str:
    followed = [seconds for seconds in times if seconds is not None]
    missed = len(times) - len(followed)
    if not followed:
        return f"none of {len(times)} followed"
    p95 = sorted(followed)[min(len(followed) - 1, round(0.95 * (len(followed) - 1)))]
    return (f"median {statistics.median(followed):.2f} s, p95 {p95:.2f} s, max {max(followed):.2f} s, over 15 s: "
            f"{sum(seconds > 15 for seconds in followed)} of {len(times)}, not followed: {missed}")


def main() -> None:
    from playwright.sync_api import sync_playwright

    moves = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    load_at_start, started = os.getloadavg(), time.monotonic()
    with streamlit_server(APP) as base_url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            for strangers in (False, True):
                times = run(browser, base_url, moves, count, strangers, first_text=1000 * strangers)
                label = f"with {len(STRANGER_VIEWS)} strangers a move" if strangers else "alone"
                print(f"teacher's link -> students' charts, {moves} moves x {count} students, {label}: "
                      f"{summary(times)}")
                print("  " + " ".join("-" if seconds is None else f"{seconds:.1f}" for seconds in times))
            print(machine(load_at_start, browser.version, time.monotonic() - started))
        finally:
            browser.close()


if __name__ == "__main__":
    main()
