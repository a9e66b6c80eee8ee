"""The top of the page, compact: on a 1280×720 projector the view's first chart has to start on the first screen.

Streamlit's own top of page is a 6rem margin and a 2.75rem title; with the model's line and the token chips
that pushed a 15-token heatmap down to about 550 px, so that a projected page showed a quarter of it.
"""

from __future__ import annotations

import streamlit as st

_STYLE = (
    "<style>[data-testid='stMainBlockContainer']{padding-top:4rem;padding-bottom:3rem}"
    "@media (min-width:640px){[data-testid='stMainBlockContainer']{padding-left:2rem;padding-right:2rem}}"
    "[data-testid='stMainBlockContainer'] h1{font-size:1.75rem;padding:0}</style>"
)


def page_head(title: str, caption: str) -> None:
    """The view's title and, under it, one line on the model."""
    st.html(_STYLE)
    st.title(title, anchor=False)
    st.caption(caption)
