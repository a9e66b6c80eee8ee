"""A part of the page that reruns alone when its own controls move: a Streamlit fragment that holds one of the
page's slots while it draws (components/caches/work.py), and, where its controls are the link's, writes the link and
the class's view again after each run (a fragment's run is not the page's, whose end would write them).

    @own_fragment(linked=True)
    def _what_if(context, new_tokens, prompt): ...

The fragment is Streamlit's own, named by the function it wraps (its module and name), so that each function
decorated is a fragment of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import streamlit as st

from components.caches import work
from components.classroom import classroom
from components.page import controls


def own_fragment(linked: bool) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A decorator: draw(*args) as a fragment holding a page slot; linked: its controls are in the link, which
    each run writes again, with the class's view."""
    def decorate(draw: Callable[..., None]) -> Callable[..., None]:
        @st.fragment
        @functools.wraps(draw)
        def fragment(*args, **kwargs) -> None:
            with work.page_work():
                draw(*args, **kwargs)
            if linked:
                classroom.sync(controls.current_state())

        return fragment

    return decorate
