"""A caption that only some settings call for, drawn where it does not move what follows it.

Streamlit mounts an element by its place in the page's tree: a caption written under some settings only would
shift every element after it by one, and a chart so moved is mounted anew from its spec (Vega compiles it and lays
it out again) where it would have had its new numbers swapped in. The slot is drawn at every run, empty when there
is nothing to say, and an empty slot takes no room.
"""

from __future__ import annotations

import streamlit as st


def caption_in_place(text: str | None) -> None:
    """text as a caption in a slot of its own, drawn at every run; the slot left empty when text is None."""
    slot = st.empty()
    if text is not None:
        slot.caption(text)
