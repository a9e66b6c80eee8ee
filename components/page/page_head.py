"""The top of the page, compact: on a 1280×720 projector the view's first chart has to start on the first screen.

Streamlit's own top of page is a 6rem margin and a 2.75rem title; with the model's line and the token chips
that pushed a 15-token heatmap down to about 550 px, so that a projected page showed a quarter of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

_STYLE = (
    "<style>[data-testid='stMainBlockContainer']{padding-top:4rem;padding-bottom:3rem}"
    "@media (min-width:640px){[data-testid='stMainBlockContainer']{padding-left:2rem;padding-right:2rem}}"
    "[data-testid='stMainBlockContainer'] h1{font-size:1.75rem;padding:0}</style>"
)


# Presentation mode: captions as dark as the text and a little larger (Streamlit draws them at 60 % opacity and
# 14.9 px, which a projector washes out).
_PRESENTED = "<style>[data-testid='stCaptionContainer']{opacity:.9;font-size:1.05rem}</style>"


def page_head(title: str, caption: str, beside: Callable[[DeltaGenerator], None] | None = None,
              present: bool = False) -> None:
    """The view's title and, under it, one line (none when caption is empty). beside(under), when given, draws in a
    column to their right, where the page's top has room (a projected class's code and QR code), and may add to
    the title's column, under the caption. present: the page's captions legible on a projector.

    One container whatever it holds, so that what follows keeps its place in the page's tree (a chart moved
    there is drawn anew from its spec: page.notices)."""
    with st.container():
        st.html(_STYLE + (_PRESENTED if present else ""))
        if beside is None:
            head, side = st.container(), None
        else:
            head, side = st.columns([3, 2], gap="medium")
        head.title(title, anchor=False)
        if caption:
            head.caption(caption)
        if side is not None:
            with side:
                beside(head)


def model_title(name: str) -> str:
    """A model as the page names it: a checkpoint folder given by its whole path (a deployer's /srv/models/tiny-gpt2)
    by the folder's own name, tiny-gpt2; the bundled model, a Hub id ("org/model") or a folder given as a relative
    path as they are written. The whole path told a learner nothing and filled the line under the title; it is kept
    where it helps, in the model selector's help (model_titles)."""
    path = Path(name).expanduser()
    return path.name if path.is_absolute() and path.name else name


def model_titles(names: Sequence[str]) -> dict[str, str]:
    """Each model's title (model_title), but a folder's whole path where two folders have one name."""
    titles = {name: model_title(name) for name in names}
    counts = {title: list(titles.values()).count(title) for title in titles.values()}
    return {name: title if counts[title] == 1 else name for name, title in titles.items()}
