"""The class store and its questions, which every session of the server meets. Without torch: a link that joins a
class reads the teacher's view from it before the page draws its sidebar, which comes before torch is imported."""

from __future__ import annotations

import os

import streamlit as st

from components.server import class_store, class_store_redis
from components.server.question_store import MemoryQuestions, QuestionStore
from components.server.question_store_redis import RedisQuestions


@st.cache_resource(show_spinner=False)
def classes() -> class_store.ClassStore:
    """Where the classes live (classroom/class_store.py): one store per server process, which every session meets;
    in Redis when ATTENTION_ANATOMY_CLASS_STORE names one, so that replicas meet there too."""
    return class_store_redis.from_setting(os.environ.get(class_store.STORE_ENV))


@st.cache_resource(show_spinner=False)
def questions() -> QuestionStore:
    """The class's questions beside the classes: in this process's memory, or in the classes' Redis."""
    return questions_beside(classes())


def questions_beside(store: class_store.ClassStore) -> QuestionStore:
    """The question store beside a class store: in its memory, or in its Redis."""
    if isinstance(store, class_store_redis.RedisStore):
        return RedisQuestions(store)
    if isinstance(store, class_store.MemoryStore):
        return MemoryQuestions(store)
    raise TypeError(f"no question store goes beside a {type(store).__name__}")


def setting_names_no_store() -> bool:
    """Whether ATTENTION_ANATOMY_CLASS_STORE names no store (a typo): the page then has no classes, and says so."""
    try:
        classes()
    except class_store.StoreSettingError:
        return True
    return False
