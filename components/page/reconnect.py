"""Keeps the page whole when its browser lands on a new server session.

A session is lost when its server restarts or a replica behind the proxy dies; the browser then
reconnects to a new session that has never run the page. Streamlit's frontend reruns the whole
page on reconnecting only if the page holds a timed fragment (or its last run was a fragment's);
otherwise the next slider move asks the new session for the controls' fragment, which it does
not know, and the move is silently dropped. A timed fragment that draws nothing makes every
reconnect rerun the page, so the new session knows all of it before the first move.
"""

from __future__ import annotations

import streamlit as st

# Rarely: each run costs a websocket round trip and nothing else.
_PERIOD_S = 3600


@st.fragment(run_every=_PERIOD_S)
def rerun_page_on_reconnect() -> None:
    """Register the timed fragment; it draws nothing."""
