"""The page's link: the one module that writes the browser's URL (st.query_params), so that what a link says
is decided in one place. Reading a link is page_state.from_query's job."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from components.page import page_state
from components.page.page_state import PageState


def write(state: PageState, extra: Mapping[str, str] | None = None) -> None:
    """The page's parameters in the URL (page_state.to_query), then extra ones (a class's code and key)."""
    st.query_params.from_dict({**page_state.to_query(state), **(extra or {})})
