"""A part of the page that reruns alone when its own controls move: a Streamlit fragment that holds one of the
page's slots while it draws (components/caches/work.py), whose callbacks may ask for the whole page (a click that
opens another view: controls.request), and, where its controls are the link's, writes the link and
the class's view again after each run (a fragment's run is not the page's, whose end would write them); a student
whose move there breaks away from the teacher gets the whole page, whose top says so.

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
            controls.rerun_page_if_requested()  # a control of the sidebar's, changed by a click in here
            with work.page_work():
                draw(*args, **kwargs)
            if linked:
                following = classroom.following()
                classroom.sync(controls.current_state())
                if following and not classroom.following():  # a student's move broke away from the teacher: the
                    st.rerun()  # line that says so, and the way back, stand at the top of the view, outside this

        return fragment

    return decorate
