"""The head atlas (attention/analyses/atlas.py): over the bundled corpus, computed once per model and kept for every
session, and over one text, cached by its key (model name, text, second text). Both read the model's own heads."""

from __future__ import annotations

import threading
from collections.abc import Callable

import streamlit as st

from attention.analyses import atlas
from attention.analyses.atlas import HeadAtlas
from components.caches.budget import CACHE_ENTRIES
from components.caches.models import model
from components.caches.work import heavy_work
from components.server.shared_runs import SharedRuns

CORPUS_SENTENCES = len(atlas.corpus_sentences())
# One corpus atlas is computed at a time: a second page asking for it meanwhile waits, then reads it.
_computing = threading.Lock()


@st.cache_resource(show_spinner=False)
def _corpus_atlases() -> SharedRuns:
    """Every model's corpus atlas, kept by (model, settings) for every session, outside st.cache_data: computing
    one reports its progress to the page that asked, which a cached function could not replay."""
    return SharedRuns(keep=CACHE_ENTRIES["corpus_atlas"])


def corpus_atlas_kept(name: str) -> HeadAtlas | None:
    """The model's corpus atlas if the server holds it already, else None (computing it takes a few seconds)."""
    return _corpus_atlases().finished((name, atlas.MODEL_OWN))


def corpus_atlas(name: str, on_batch: Callable[[int, int], None] | None = None) -> HeadAtlas:
    """The atlas of the model's heads over the corpus; on_batch(done, total) told the sentences done while it is
    computed, the first time."""
    key = (name, atlas.MODEL_OWN)
    kept = _corpus_atlases().finished(key)
    if kept is not None:
        return kept
    with _computing:  # before the slot: a page waiting here holds none of the slots other work needs
        kept = _corpus_atlases().finished(key)
        if kept is None:
            with heavy_work():
                kept = atlas.head_atlas(model(name), [(sentence, None) for sentence in atlas.corpus_sentences()],
                                        atlas.MODEL_OWN, on_batch)
            _corpus_atlases().keep_finished(key, kept)
    return kept


def text_atlas(name: str, text: str, text_b: str) -> HeadAtlas:
    """The atlas of the model's heads over one text (or sentence pair) alone."""
    with heavy_work():
        return _text_atlas(name, text, text_b)


@st.cache_data(show_spinner=False, max_entries=CACHE_ENTRIES["text_atlas"])
def _text_atlas(name: str, text: str, text_b: str) -> HeadAtlas:
    return atlas.head_atlas(model(name), [(text, text_b or None)])
