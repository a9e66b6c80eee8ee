"""How wide the page is in the reader's browser, so that every chart can be sized to fit its column.

A chart's size is fixed in its spec, and the server cannot see the screen: a chart sized for a laptop ran
past its column on a 1280-px projector and 270 px off a phone. A small script in the page (a Streamlit
component, no iframe) measures the main block's width and the window's width and height, rounded to
STEP_PX, and reports them whenever they change (a resized window, the sidebar opened or closed); the page
then runs again with charts sized for them. Until the first report (the first run of a session) the page
is drawn for the size the same browser last reported (a cookie the script writes, read when the page opens),
or for DEFAULT in a browser new to the page: a page reopened, or a link followed, is then drawn once, not
twice.

The script is mounted last in the page's run (measure), and what it last reported is read first (current):
a report sent while the first run was still drawing the sidebar cut that run short, and the next one took
the text area the browser had not yet received as empty.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components.assets import filled, read_beside
from components.page import controls

STEP_PX = 20  # widths are reported in steps of this: a few px more or less would rerun the page for nothing
STACKED_BELOW_PX = 640  # Streamlit puts columns under each other in a window narrower than this
COLUMN_GAP_PX = 34  # st.columns(gap="medium"): 2rem at the theme's 17-px font
KEY = "viewport"
COOKIE = "aa_viewport"  # "<main>x<window>x<height>" in px, the last size reported in this browser
COOKIE_DAYS = 30
_PX_RANGE = range(100, 20_001)  # what a cookie may say; anything else is not a size this script wrote

# The size as the script reports it (viewport_size.js), of the page's main block `main`; the browser tests read it too
# (harness/browser.py), to tell whether the page has reported the size it has now.
SIZE_JS = filled(read_beside(__file__, "viewport_size.js"), step_px=STEP_PX).strip()
# The script that measures and reports: viewport.js, beside this module.
_measure = st.components.v2.component(
    "attention_anatomy.viewport", isolate_styles=False,
    js=filled(read_beside(__file__, "viewport.js"), size_js=SIZE_JS, cookie=COOKIE, cookie_days=COOKIE_DAYS))


@dataclass(frozen=True)
class Viewport:
    """The width of the page's main block (inside its padding), and the window's width and height, in CSS px."""

    main_px: int
    window_px: int
    height_px: int

    @property
    def stacked(self) -> bool:
        """Whether columns stand under each other (a phone), each as wide as the main block."""
        return self.window_px < STACKED_BELOW_PX

    def column_px(self, share: float) -> int:
        """The width of a column that takes `share` of the main block's row of columns."""
        return column_px(self.main_px, share, self.stacked)


def column_px(width: int, share: float, stacked: bool, gap_px: int = COLUMN_GAP_PX) -> int:
    """The width of a column taking `share` of a row of st.columns width px wide (with one gap between two),
    or all of it when the browser stacks columns."""
    if stacked or share >= 1:
        return width
    return int((width - gap_px) * share)


DEFAULT = Viewport(main_px=1000, window_px=1366, height_px=768)  # a 1366×768 laptop with the sidebar open


def _reported() -> dict | None:
    """What the script last reported in this session, or in this browser before (its cookie):
    {"main", "window", "height"} in px, or None before it ever has."""
    return st.session_state.get(KEY, {}).get("size") or remembered(st.context.cookies.get(COOKIE, ""))


def remembered(cookie: str) -> dict | None:
    """The size a cookie of the script's says, or None for anything it did not write."""
    parts = cookie.split("x")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return None
    main, window, height = (int(part) for part in parts)
    if not all(px in _PX_RANGE for px in (main, window, height)):
        return None
    return {"main": main, "window": window, "height": height}


def current() -> Viewport:
    """The size the browser last reported, or DEFAULT before it ever has."""
    size = _reported()
    if not size:
        return DEFAULT
    return Viewport(main_px=int(size["main"]), window_px=int(size["window"]), height_px=int(size["height"]))


def measure() -> None:
    """Mount the script that measures the page (at the end of the sidebar, where it takes no room from the
    views); call it once per run, after every widget is drawn. A run that shows another view than the run before
    also mounts one that scrolls the main area to its top (to_top)."""
    with st.sidebar:
        _measure(key=KEY, data=_reported(), on_size_change=lambda: None, height=0)
        _to_top_if_new_view()


# The script that scrolls the main area to its top (main_to_top.js, beside this module): mounted on the one run that
# shows a new view, so that it runs once.
_to_top = st.components.v2.component("attention_anatomy.main_to_top", js=read_beside(__file__, "main_to_top.js"),
                                     isolate_styles=False)
_LAST_VIEW = "_viewport_last_view"  # in the session: (the view the last run showed, how many views it has shown)


def _to_top_if_new_view() -> None:
    """Scroll the main area to its top when this run shows another view than the last (not on a session's first
    run: the page opens at its top)."""
    view = controls.current_state().view
    last, shown = st.session_state.get(_LAST_VIEW, (view, 0))
    if view != last:
        shown += 1
        _to_top(key=f"main_to_top_{shown}", height=0)
    st.session_state[_LAST_VIEW] = (view, shown)
