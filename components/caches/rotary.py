"""The one-head view's Rotation stage (components/views/parts/rotary.py): a rotary head's q and k read once off its
trace, and what the stage draws of them: one pair before and after its turn, the scores with every position moved by
Δ, the score against distance (attention/dissect/rotary_views.py). Key: model name, texts, settings; values the core's
frozen records of numpy, each computed holding a heavy-work slot.

Letters used in sizes: T tokens, d head size.
"""

from __future__ import annotations

import streamlit as st

from attention.dissect import rotary_views
from attention.dissect.rotary_views import Decay, HeadTurn, PairPicture, ShiftTest
from attention.stages.settings import TraceSettings
from components.caches import layers
from components.caches.models import model
from components.caches.work import heavy_work

# (T, d) floats twice: 0.25 MB at 512 tokens and d = 64; a class's heads and texts. What the stage draws is computed
# from it on each run, in a few ms at 512 tokens (the shift test's two (T, T) products the most): a cache of each
# would keep as much again for every pair, token and Δ a student tries.
TURN_ENTRIES = 64


def pair_picture(name: str, text: str, text_b: str, settings: TraceSettings, query: int, key: int,
                 pair: int) -> PairPicture:
    """Pair `pair` of head settings.head's q at token `query` and its k at token `key`, before and after the turn."""
    with heavy_work():
        return rotary_views.pair_picture(_turn(name, text, text_b, settings), query, key, pair)


def shift_test(name: str, text: str, text_b: str, settings: TraceSettings, shift: int) -> ShiftTest:
    """The head's raw scores at every pair of positions, and with every position moved by `shift`."""
    with heavy_work():
        return rotary_views.shift_test(_turn(name, text, text_b, settings), shift)


def decay(name: str, text: str, text_b: str, settings: TraceSettings, query: int, key: int) -> Decay:
    """The score of the head's q at token `query` and k at token `key` against the distance between them."""
    with heavy_work():
        return rotary_views.decay(_turn(name, text, text_b, settings), query, key)


@st.cache_data(show_spinner=False, max_entries=TURN_ENTRIES)
def _turn(name: str, text: str, text_b: str, settings: TraceSettings) -> HeadTurn:
    """The head's q and k before their turn, off the trace the page's other stages read (layers.trace)."""
    return rotary_views.head_turn(model(name), layers.trace(name, text, text_b, settings))
