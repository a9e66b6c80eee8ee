"""The models: loaded once per server process and shared by every session (inference only), and Hub downloads.
Which models the page offers is offered.py's."""

from __future__ import annotations

import streamlit as st

from attention.models import download, hub, lm_heads
from attention.models.loading import LoadedModel, ModelLoadError, Progress, load_model, memory_bytes, weights_path
from attention.models.model_list import BUNDLED_MODEL
from components.caches import model_room
from components.caches.budget import BUDGET, CACHE_ENTRIES

# ---- Hub models: one download per model per server process, shared by every session ----

@st.cache_resource(show_spinner=False)
def downloads() -> download.Downloads:
    return download.Downloads(max_weights_bytes=model_room_bytes())


def model_room_bytes() -> int:
    """The room every loaded model's weights share beside the bundled model's, in this server's memory budget."""
    try:
        bundled = weights_bytes(BUNDLED_MODEL)
    except ModelLoadError:  # a damaged install: the bundled model cannot load, so it takes no room either
        bundled = 0
    return BUDGET.weights_mb * 2**20 - bundled


def needs_download(name: str) -> bool:
    """Whether name is an allowed Hub model whose files are not all in the cache yet."""
    return download.is_hub_model(name) and not hub.is_cached(name)


def start_download(name: str) -> download.Download:
    """name's download, started or joined (one per model per server process). Raises ModelLoadError at once,
    saying why, when none may start (not an allowed Hub id, or a server that may not download), rather than after
    a thread has started."""
    download.check_can_download(name)
    return downloads().start(name)


# ---- The model: key (model name) ----

# A model the cache pushes out or is cleared of gives its room back (caches/model_room.py). No spinner: a model
# other than the bundled one is loaded by a thread of caches/model_loads.py, under a bar of its stages, and the
# bundled one under the first paint's status.
@st.cache_resource(show_spinner=False, max_entries=CACHE_ENTRIES["model"],
                   on_release=lambda loaded: model_room.LOADED.forget(loaded.name))
def model(name: str, _progress: Progress | None = None) -> LoadedModel:
    """name loaded, once per server process; _progress (not part of the key) is told each stage as it starts.

    On disk already (a folder, a GGUF, or downloaded), it is weighed as the core will hold it, float32
    (memory_bytes: a GGUF's 94 MB file is 513 MB of weights, a bfloat16 file half of them), and refused before it
    is read unless it fits beside the models loaded."""
    weighed = 0 if name == BUNDLED_MODEL else weights_bytes(name)  # the room is beside the bundled model
    with model_room.LOADED.reserved(name, weighed, model_room_bytes()):
        loaded = load_model(name) if _progress is None else load_model(name, _progress)
    return loaded


def weights_bytes(name: str) -> int:
    """What name's weights take once loaded (attention.models.loading.memory_bytes), weighed once per weights file:
    reading a GGUF's header to count its tensors takes seconds, as long as its vocabulary is."""
    path = weights_path(name)
    stat = path.stat()
    return _weighed(name, str(path), stat.st_size, stat.st_mtime_ns)


@st.cache_resource(show_spinner=False, max_entries=CACHE_ENTRIES["model_weights"])
def _weighed(name: str, path: str, size: int, modified_ns: int) -> int:
    """path, size and modified_ns name the file in the key: a folder saved anew is weighed anew."""
    return memory_bytes(name)


def loaded_now(name: str) -> bool:
    """Whether name is a model this server holds now (the bundled one is always at hand): what an HTTP route may
    run, which must never start a load or a download."""
    return name == BUNDLED_MODEL or name in model_room.LOADED.held()


# ---- The language-model head, for switching heads off: key (model name) ----

@st.cache_resource(show_spinner="Loading the model's language-model head (once per server)…",
                   max_entries=CACHE_ENTRIES["lm_head"])
def lm_head(name: str) -> tuple[lm_heads.LanguageModelHead | None, str | None]:
    """The head alone (BERT's masked-language-model head, GPT-2's next-token head), or None and why: a checkpoint
    without the head stays without it, so that is cached too."""
    try:
        return lm_heads.load_head(name, model(name)), None
    except lm_heads.NoLanguageModelHead as error:
        return None, str(error)


def language_model(name: str) -> tuple[lm_heads.LanguageModel | None, str | None]:
    """The model with its head, or None and why: the kept head on the model model(name) holds now, so that a
    model the model cache lets go is not kept here as a second copy beside the one it loads again."""
    head, why = lm_head(name)
    return (None if head is None else lm_heads.LanguageModel(model(name), head)), why
