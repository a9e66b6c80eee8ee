"""A follower's watch on its class: a small script on the page asks the App's route /api/class for the class's
version (components/api/routes.py) and reruns the page only when the page is out of date: the teacher's view moved
on (while the student follows), the class ended, or the store stopped or started answering. Each ask gives the
version the page last heard of, and the route holds it until the class moves on from there, or for
class_waits.WAIT_S (components/server/class_waits.py): the teacher's move is heard as it is made, where a poll every
POLL_S heard of it up to POLL_S later, and an idle follower asks once a WAIT_S, where it polled every POLL_S. When
the server holds no more asks, the answer comes at once, and the script asks again after POLL_S, as a poll.

A timed fragment did this before: each poll was a run of the page's script, and each run made the browser draw
the page again (about 80 ms of its renderer's time, 10 % of a core while nothing happened) and cost the server
about 2 ms. The route's answer costs the browser a fetch, and the server a read of the store.

The page's every run checks the class itself (classroom.follow); the trigger's callback checks it before the run it
starts, so that this run draws the teacher's view, without a second run. The trigger's value is the version the page
had drawn when the script asked (drawn_version): a run slower than ASK_AGAIN_MS (a loaded server) makes the script
ask again before the page has drawn the teacher's last view, and Streamlit sends with that ask what the page's
widgets still show, the view before it, which must not pass for the student's own move.

The watch is mounted at the foot of the view's fragment (classroom.watch), so that the run a move of the view's own
controls (a head, a layer, a stage, a toggle) starts is the fragment's alone: about two thirds of a whole page's
run, and thirty followers' runs queue on one server process (bench/class_follow.py). The callback asks for the
whole page (controls.rerun_whole_page) when the teacher moved a sidebar control, or the class ended or stopped
answering, which the page draws outside it.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from components.assets import filled, read_beside
from components.server.class_waits import WAIT_S

# How long the script waits before asking again for a rerun it already asked for: the rerun that answers it sends
# the script new data (and so a fresh start) well before; without it, a rerun lost would leave the page behind.
ASK_AGAIN_MS = 5_000
# An ask's fetch gives up after this long (the server holds it WAIT_S at most): the script then asks again.
ASK_TIMEOUT_MS = round(WAIT_S * 1000) + 4_000
_RUNS = "_class_watch_runs"  # session state: how many times the watch was mounted
WATCH_KEY = "class_watch"  # the watch's key: its trigger's value is read under it (drawn_version)

# The script that polls: class_watch.js, beside this module.
_watch = st.components.v2.component(
    "attention_anatomy.class_watch", isolate_styles=False,
    js=filled(read_beside(__file__, "class_watch.js"), ask_timeout_ms=ASK_TIMEOUT_MS, ask_again_ms=ASK_AGAIN_MS))


def watch(code: str, version: int, *, following: bool, reachable: bool, follower: str, period_s: float,
          on_behind: Callable[[], None]) -> None:
    """Mount the watch for a follower's page showing version of class code; follower (its id) is said to be there
    with every ask while it follows (at least every WAIT_S, within class_store.HEARTBEAT_S); period_s: how long the
    script waits to ask again after an answer the server did not hold; on_behind runs before the run the script asks
    for. At the foot of the view's fragment (classroom.watch): an element of no height still takes the gap between
    two elements, which above the view would push its chart down."""
    runs = st.session_state[_RUNS] = st.session_state.get(_RUNS, 0) + 1
    _watch(key=WATCH_KEY, height=0, on_behind_change=on_behind,
           data={"run": runs, "code": code, "version": version, "following": following, "reachable": reachable,
                 "beat": follower if following else "", "period_ms": round(period_s * 1000)})


def drawn_version() -> int | None:
    """In on_behind's callback: the class's version the page had drawn when its watch asked for this run."""
    asked = st.session_state.get(WATCH_KEY)
    version = asked.get("behind") if asked is not None else None
    return version if isinstance(version, int) and not isinstance(version, bool) else None
