"""Which colours a reader's charts are drawn in: the standard palette, or the one for colour-blind readers
(a setting of the page's, each reader's own: colour_blind=1 in a link).

A chart names the role of its colours, as it always has: "blues" (weights, 0 to the largest), "tinted blues"
(every cell holds something) or "redblue" (signed, white at zero). The palette in force says which scheme of
colours.SCHEMES draws each role, in the browser's cells (colours.colour_scale) and in the server's pictures
(heatmap.picture_row) alike. It is read in one place, palette_in_force, from the page's setting: the views that
name a role need not carry it, and every cache that keeps a built chart keys it on the palette
(components/caches/chart_memos.py), so that one reader's palette is never handed to another.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

STANDARD, COLOUR_BLIND = "standard", "colour-blind"
# Each palette's scheme for a role (a role missing is drawn in its own scheme). For colour-blind readers: cividis
# (Nuñez, Anderton & Renslow 2018), made to look the same to readers with and without a red-green deficiency, its
# light end at 0 as the blues' is; and Vega's blue-orange, turned so that positive stays blue and negative is orange,
# two hues that no common deficiency confuses (tests/charts/test_colour_vision.py simulates each).
PALETTES: dict[str, dict[str, str]] = {
    STANDARD: {},
    COLOUR_BLIND: {"blues": "cividis", "tinted blues": "cividis", "redblue": "orangeblue"},
}

_chosen: contextvars.ContextVar[str | None] = contextvars.ContextVar("palette", default=None)
_reader: list[Callable[[], str]] = [lambda: STANDARD]  # the page's setting, installed by read_palette_with


def read_palette_with(reader: Callable[[], str]) -> None:
    """Where palette_in_force reads the reader's palette: a function of no argument that the page installs
    (components/page/controls.py reads its own setting, in the session of the run that asks)."""
    _reader[0] = reader


def palette_in_force() -> str:
    """The palette charts are drawn in now: drawn_in's, inside one; else the page's reader's setting (STANDARD
    outside a page)."""
    return _chosen.get() or _reader[0]()


@contextlib.contextmanager
def drawn_in(palette: str) -> Iterator[None]:
    """Charts built inside are drawn in this palette, whatever the page's setting (a test, a notebook)."""
    if palette not in PALETTES:
        raise ValueError(f"palette must be one of {', '.join(PALETTES)}, not {palette!r}")
    token = _chosen.set(palette)
    try:
        yield
    finally:
        _chosen.reset(token)


def drawn_scheme(role: str) -> str:
    """The scheme (a key of colours.SCHEMES) that draws a role ("blues", "tinted blues", "redblue") in the
    palette in force."""
    return PALETTES[palette_in_force()].get(role, role)
