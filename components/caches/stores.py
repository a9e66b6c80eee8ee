"""The class store, which every session of the server meets. Without torch: a link that joins a class reads the
teacher's view from it before the page draws its sidebar, which comes before torch is imported."""

from __future__ import annotations

import os

import streamlit as st

from components.server import class_store, class_store_redis


@st.cache_resource(show_spinner=False)
def classes() -> class_store.ClassStore:
    """Where the classes live (classroom/class_store.py): one store per server process, which every session meets;
    in Redis when ATTENTION_ANATOMY_CLASS_STORE names one, so that replicas meet there too."""
    return class_store_redis.from_setting(os.environ.get(class_store.STORE_ENV))


def setting_names_no_store() -> bool:
    """Whether ATTENTION_ANATOMY_CLASS_STORE names no store (a typo): the page then has no classes, and says so."""
    try:
        classes()
    except class_store.StoreSettingError:
        return True
    return False
