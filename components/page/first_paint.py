"""What a new server process shows at once: the page's frame and a line saying what loads, before torch.

A process's first run imports torch and transformers and loads the model: seconds in which the page used to
stay blank. Streamlit sends each element to the browser as the script draws it, so what the script draws
before that import shows at once. This module imports Streamlit alone (tests/page/test_first_paint.py checks that
nothing it imports brings torch or transformers in); the page's script imports the rest after calling it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.assets import filled, read_beside, style_tag
from components.page.link_flags import presents
from components.page.page_head import page_head

TITLE = "Attention Anatomy"
LOADING = "Loading the model (torch, transformers)…"
WARM_UP_KEY = "chart_warm_up"  # the container of the chart drawn, hidden, while the model loads
# The smallest chart Vega-Lite draws: one cell, 1 × 1 px, no axis.
_WARM_UP_CHART = {"width": 1, "height": 1, "data": {"values": [{"x": 0}]}, "mark": "rect",
                  "encoding": {"x": {"field": "x", "type": "ordinal", "axis": None}},
                  "config": {"view": {"stroke": None}}}
_HIDDEN = style_tag(filled(read_beside(__file__, "first_paint.css"), warm_up_key=WARM_UP_KEY))  # the chart, hidden
_READY = threading.Event()  # set once a run of this process has loaded the model: later runs show no status


def frame(link: Mapping[str, Sequence[str]]) -> None:
    """The tab's title, the page's layout and the sidebar's title. A link in presentation mode opens with the
    sidebar closed: a projected page wants its width for the charts."""
    st.set_page_config(page_title=TITLE, layout="wide",
                       initial_sidebar_state="collapsed" if presents(link) else "auto")
    st.sidebar.title(TITLE)


def loading(link: Mapping[str, Sequence[str]]) -> DeltaGenerator:
    """A slot at the top of the page. Until this process has loaded the model, it holds the page's name and a
    status saying what loads; loaded() empties it. Once loaded, it stays empty: one place in the page's tree
    either way, so that what follows keeps its place."""
    slot = st.empty()
    if not _READY.is_set():
        with slot.container():
            page_head(TITLE, "", present=presents(link))
            st.status(LOADING, state="running")
            _warm_up_charts()
    return slot


def _warm_up_charts() -> None:
    """A hidden chart, so that the browser fetches and starts its chart library while the server loads the model.
    The library comes with the page's first chart: without this, the first heatmap, once sent, took 0.8-1.0 s to
    draw, against 0.3 s once the library has started (a new server, three launches each)."""
    with st.container(key=WARM_UP_KEY, height=1, border=False):
        st.html(_HIDDEN)
        st.vega_lite_chart(spec=_WARM_UP_CHART, width="content")


def loaded(slot: DeltaGenerator) -> None:
    """The model is loaded (or could not be, and the page says why next): the status goes, for this run and all."""
    slot.empty()
    _READY.set()
