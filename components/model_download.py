"""Hub models fetched in the background while the page keeps working with the bundled model.

One download per model per server process, shared by every session: a class of 30 choosing
bert-base-uncased at once starts one download, not 30. A session that asks for a Hub model not
yet in the cache is shown the bundled model meanwhile, with a progress bar under the model
selector that refreshes itself; when the download ends the whole page reruns, with the new model
or, if the download failed, with the bundled one and a notice saying why.
"""

from __future__ import annotations

import logging
import threading

import streamlit as st

from attention import BUNDLED_MODEL, ModelLoadError
from attention.download import DownloadProgress, check_can_download, download, is_hub_model
from attention.hub import is_cached

log = logging.getLogger(__name__)

REFRESH_S = 1.0  # how often a waiting page looks at the progress: a small rerun of the bar alone
_WATCHED = "_downloads_watched"  # in the session: {model name: the Download this session waits for}


class Download:
    """One model's download, run in its own thread; progress and outcome can be read from any thread."""

    def __init__(self, name: str, **where):
        self.name = name
        self._where = where  # endpoint and cache_dir for attention.download.download, when not the defaults
        # Replaced whole by the download thread, never changed in place: a reader sees done and total together.
        self.progress = DownloadProgress(0, 0)
        self.error: str | None = None  # what to tell the student, once finished without success
        self._finished = threading.Event()
        threading.Thread(target=self._run, name=f"download {name}", daemon=True).start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the download has ended (or timeout seconds passed); whether it has ended."""
        return self._finished.wait(timeout)

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    @property
    def failed(self) -> bool:
        return self.finished and self.error is not None

    @property
    def succeeded(self) -> bool:
        return self.finished and self.error is None

    def _run(self) -> None:
        try:
            download(self.name, self._report, **self._where)
        except ModelLoadError as error:
            self.error = str(error)
        except Exception:  # a bug must not leave the bar waiting forever; the log keeps the details
            log.exception("downloading %s failed", self.name)
            self.error = (f"The download of {self.name!r} failed; the error was logged on the server. "
                          f"Choose the model again to retry, or keep working with the bundled model {BUNDLED_MODEL!r}.")
        finally:
            self._finished.set()  # after error is set, so a finished download always tells how it ended

    def _report(self, progress: DownloadProgress) -> None:
        self.progress = progress


class Downloads:
    """This server process's downloads, at most one running per model, shared by every session.

    endpoint and cache_dir default to HF_ENDPOINT and the Hugging Face cache, where load_model looks.
    """

    def __init__(self, *, endpoint: str | None = None, cache_dir: str | None = None) -> None:
        self._lock = threading.Lock()
        self._by_name: dict[str, Download] = {}
        self._where = {"endpoint": endpoint, "cache_dir": cache_dir}

    def start(self, name: str) -> Download:
        """The model's running or finished download; a fresh one if there was none or the last one failed."""
        with self._lock:
            current = self._by_name.get(name)
            if current is None or current.failed:
                current = self._by_name[name] = Download(name, **self._where)
            return current


@st.cache_resource(show_spinner=False)
def downloads() -> Downloads:
    return Downloads()


def usable_model(name: str) -> str:
    """The model the page can show now: name, or the bundled model while name downloads (a bar says how far).

    Raises ModelLoadError, saying why, when this server may not download, or when the download this
    session was waiting for failed; the page then goes back to the bundled model with that notice.
    """
    if not is_hub_model(name) or is_cached(name):
        return name
    watched = st.session_state.setdefault(_WATCHED, {})
    waited_for = watched.pop(name, None)
    if waited_for is not None and waited_for.failed:  # told once; choosing the model again retries
        raise ModelLoadError(waited_for.error)
    check_can_download(name)  # offline or not allowed: said at once, not after a thread has started
    job = downloads().start(name)
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
