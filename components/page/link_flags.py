"""A link's on/off parameters, read without the core: the page reads present= before torch is imported.

page_state parses every parameter of a link and needs the core's ranges and choices (and so torch); whether the
page presents is asked before that, to open a projected page with its sidebar closed from the first paint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def flag(raw: str) -> bool:
    """A link's on/off value: 1, true, yes, on or 0, false, no, off, in any case; else ValueError."""
    if raw.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if raw.strip().lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("it must be 1 or 0")


def presents(query: Mapping[str, Sequence[str]]) -> bool:
    """Whether a link asks for presentation mode, as page_state.from_query reads present= (a malformed value: no)."""
    given = list(query.get("present", ()))
    try:
        return bool(given) and flag(given[-1])
    except ValueError:
        return False
