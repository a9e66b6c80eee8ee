"""What every session of the server meets: the line of trainings and the induction lab's runs (the class store
is stores.py's)."""

from __future__ import annotations

import logging

import streamlit as st

from components.caches.budget import CACHE_ENTRIES
from components.server import cpus, turns
from components.server.process import one_torch_thread
from components.server.shared_runs import SharedRuns

log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def training_turns() -> turns.Turns:
    """The server's one line of trainings, shared by every session: at most as many at once as the cores this
    process may use (server/cpus.py), each on one torch thread as the heavy-work slots are (server/process.py)."""
    try:
        slots = turns.slots_from_environment()
    except ValueError as error:  # a deployer's typo must not take the page down: said in the log
        slots = cpus.process_cpus()
        log.error("%s; using one per core this process may use (%d)", error, slots)
    return turns.Turns(slots, on_take=one_torch_thread)


@st.cache_resource(show_spinner=False)
def induction_runs() -> SharedRuns:
    """The induction lab's runs by their settings, one trainer each and finished ones kept for every session: a
    class that follows its teacher trains nothing twice (server/shared_runs.py)."""
    return SharedRuns(keep=CACHE_ENTRIES["induction_runs"])
