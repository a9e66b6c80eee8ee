"""A key pressed on a chart's own input reruns the page at once, not after Streamlit's pause for a drag to stop.

chart_keys.js, beside this module, does it in the browser: mounted once a run, it listens once a page."""

from __future__ import annotations

import streamlit as st

from components.assets import filled, read_beside

KEY = "chart_keys"
# Streamlit's own pause before it sends a chart's selection that no click came with (ArrowVegaLiteChart's
# useVegaLiteSelections, 150 ms in Streamlit 1.67): keys closer together than this are one burst.
BURST_MS = 150

_listen = st.components.v2.component("attention_anatomy.chart_keys", isolate_styles=False,
                                     js=filled(read_beside(__file__, "chart_keys.js"), burst_ms=BURST_MS))


def listen() -> None:
    """Mount the listener (in the sidebar, where it takes no room); once a run, beside viewport.measure()."""
    with st.sidebar:
        _listen(key=KEY, height=0)
