"""A model that takes long to load, loaded in the background while the page keeps working with the bundled model.

SmolLM2-135M-Instruct's GGUF is dequantized as it loads, for 15 s to a minute. Rather than a page frozen for
that long, the page waits a moment (QUICK_S: a checkpoint folder or a downloaded Hub model is loaded by then, and
shown at once, as before) and then shows the bundled model, with a bar under the model selector that names the
stage the load is at and refreshes itself; when the load ends the whole page reruns, with the new model or, if it
could not be loaded (it does not fit in the memory budget, say), with the bundled one and a notice saying why, as
after a Hub download (components/page/model_download.py). Every session that asks for the model meanwhile watches
the same load (components/caches/model_loads.py): one load per model per server process.
"""

from __future__ import annotations

import streamlit as st

from attention.models.loading import ModelLoadError
from attention.models.model_list import BUNDLED_MODEL
from components.caches import model_loads, models
from components.page.page_head import model_title

QUICK_S = 2.0  # how long a page waits for a GGUF's load before it shows the bundled model and a bar instead
# How long it waits for any other model (a checkpoint folder, a downloaded Hub model): their weights are read as they
# are, in a second or two on a quiet machine; a machine busy with other readers must not turn that into a bar.
READ_AS_THEY_ARE_S = 30.0
REFRESH_S = 1.0  # how often a waiting page looks at the load: a small rerun of the bar alone
_WATCHED = "_loads_watched"  # in the session: {model name: the Load this session waits for}


def usable_model(name: str) -> str:
    """The model the page can show now: name once it is loaded, or the bundled model while it loads (a bar says
    how far). Raises ModelLoadError, saying why, when the load this session waited for failed (the page then goes
    back to the bundled model with that notice; choosing the model again tries again)."""
    if name == BUNDLED_MODEL or (name not in model_loads.LOADS.running() and models.loaded_now(name)):
        return name
    watched = st.session_state.setdefault(_WATCHED, {})
    waited_for = watched.pop(name, None)
    if waited_for is not None and waited_for.failed:  # told once
        raise ModelLoadError(waited_for.error)
    job = model_loads.LOADS.start(name)
    if waited_for is None:  # a rerun while the bar is up does not wait again
        job.wait(QUICK_S if model_loads.dequantized(name) else READ_AS_THEY_ARE_S)
    if job.failed:
        raise ModelLoadError(job.error)
    if job.succeeded:
        return name
    watched[name] = job
    with st.sidebar:
        _load_progress(name)
    return BUNDLED_MODEL


def loading_notices(chosen: str) -> list[str]:
    """A line at the top of the page while the chosen model loads: a reader who opened a link sees why the page shows
    another model, without finding the bar at the foot of the sidebar. Gone with the whole page's rerun at the end."""
    job = st.session_state.get(_WATCHED, {}).get(chosen)
    if job is None or job.finished:
        return []
    return [f"{model_title(chosen)} is loading, which takes 15 s to a minute (its weights are dequantized as they are "
            "read): the bar under the model selector says how far. The bundled model is shown until then."]


@st.fragment(run_every=REFRESH_S)
def _load_progress(name: str) -> None:
    """The bar of the load this session waits for; the whole page reruns once it has ended."""
    job = st.session_state.get(_WATCHED, {}).get(name)
    if job is None:
        return
    if job.finished:
        st.rerun()  # the whole page: it switches to the new model, or says why it cannot
    progress = job.progress
    st.progress(progress.fraction, text=f"Loading {model_title(name)}: {progress}")
    st.caption("Showing the bundled model until it is ready.")
