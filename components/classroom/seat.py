"""A session's place in a class (components/classroom/classroom.py): none, the teacher's or a follower's, kept in the
session's state."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import streamlit as st

_SEAT = "_class_seat"


@dataclass
class Seat:
    """A session's place in a class: none, the teacher's or a follower's."""

    role: str = ""  # "", "teacher" or "follower"
    code: str = ""
    key: str = ""  # the teacher's only
    following: bool = True  # a follower's: False once the student moved something
    version: int = 0  # a follower's: the teacher's change the page shows
    sent: dict[str, str] | None = None  # the teacher's: the view the class last received
    unsent: bool = False  # the teacher's: a change the store could not take yet
    expected: dict[str, str] | None = None  # a follower's: the page's parameters as the teacher's view left them
    taken: dict[str, str] = field(default_factory=dict)  # a follower's: the teacher's view of version, as taken
    notices: list[str] = field(default_factory=list)
    follower_id: str = field(default_factory=lambda: secrets.token_hex(8))  # random: only to count followers
    beat_at: float = float("-inf")  # a follower's: when it last said it is there (time.monotonic)
    unreachable: bool = False  # a follower's: the class's store did not answer the page's last run
    classes_off: bool = False  # the server's class store setting names no store: no class can be opened or joined


def class_seat() -> Seat:
    """This session's seat (an empty one, in no class, until the page joins or opens one)."""
    return st.session_state.setdefault(_SEAT, Seat())


def seated() -> bool:
    """Whether this session has a seat yet: the page's first run gives it one (classroom.start)."""
    return _SEAT in st.session_state


def new_seat() -> Seat:
    """An empty seat for this session, in place of any it had."""
    seat = st.session_state[_SEAT] = Seat()
    return seat
