"""Fetching an allowed Hub model into the local Hugging Face cache, with byte-level progress.

Only what a BertModel or a GPT2Model and its tokenizer need is fetched (attention.models.hub.FILES): the config,
the safetensors weights and the tokenizer files. One `snapshot_download` fetches them, several at once,
into the ordinary Hugging Face cache, so `load_model(name)` finds them there afterwards. No Streamlit
here: `Downloads` runs `download` in a thread per model, and the page reads the progress it reports.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attention.models.hub import FILES, REQUIRED, VOCABULARIES, WEIGHTS, in_cache
from attention.models.loading import BUNDLED_MODEL, ModelLoadError, allowed_hub_ids, check_fits, resolve

log = logging.getLogger(__name__)

# The progress-bar group (huggingface_hub.utils.tqdm's `name`) of snapshot_download's bar of bytes written
# to the cache, summed over all files; its other bars count bytes off the network and finished files.
BYTES_BAR = "huggingface_hub.snapshot_download"
FLOAT32_BYTES = 4  # what a parameter takes as the core holds it, whatever the checkpoint stores


@dataclass(frozen=True)
class DownloadProgress:
    """How far a model's download is: bytes in the cache so far out of all its files' bytes."""

    done: int
    total: int  # 0 until the Hub has told the files' sizes

    @property
    def fraction(self) -> float:
        return min(self.done / self.total, 1.0) if self.total else 0.0

    def __str__(self) -> str:
        return f"{self.done / 1e6:.1f} of {self.total / 1e6:.1f} MB"


def is_hub_model(name: str) -> bool:
    """Whether name is an allowed Hub id, fetched on first use (not the bundled model, not a folder)."""
    return name in allowed_hub_ids()


def check_can_download(name: str) -> None:
    """Refuse at once, with the reason, a model that is not on the allow-list or a server that may not download."""
    from huggingface_hub import constants

    if not isinstance(resolve(name), str):
        raise ModelLoadError(f"{name!r} is not a Hugging Face Hub model, so there is nothing to download.")
    if constants.is_offline_mode():
        raise ModelLoadError(
            f"The model {name!r} could not be loaded: this server does not download from the Hugging Face Hub "
            f"(HF_HUB_OFFLINE is set). Use the bundled model {BUNDLED_MODEL!r}, which needs no network."
        )


def download(name: str, on_progress: Callable[[DownloadProgress], None] | None = None, *,
             endpoint: str | None = None, cache_dir: str | Path | None = None,
             max_weights_bytes: int | None = None) -> Path:
    """Fetch an allowed Hub model's files into the cache, reporting progress; return its snapshot folder.

    on_progress is called, one call at a time, from snapshot_download's threads with every chunk
    written (10 MB at a time). Files already complete in the cache count as done from the start and are
    not fetched again; a file an earlier download left half-way goes on from where it stopped.
    endpoint and cache_dir default to HF_ENDPOINT and HF_HOME's cache. A model whose weights are larger
    than max_weights_bytes is refused before any file is fetched (the Hub tells the sizes first).
    Raises ModelLoadError saying what happened and what to do.
    """
    from huggingface_hub import snapshot_download

    check_can_download(name)
    report = on_progress or (lambda progress: None)
    commit, sizes, weights_bytes = _wanted_files(name, endpoint)
    check_fits(name, weights_bytes, max_weights_bytes)
    total = sum(sizes.values())
    done = sum(size for file, size in sizes.items() if in_cache(name, file, cache_dir=cache_dir, revision=commit))
    lock = threading.Lock()  # several files are written at once: one sum, reported in order
    report(DownloadProgress(done, total))

    def add(n: int) -> None:
        nonlocal done
        with lock:
            done += n
            report(DownloadProgress(done, total))

    try:
        folder = snapshot_download(name, allow_patterns=list(sizes), tqdm_class=_byte_counter(add),
                                   endpoint=endpoint, cache_dir=cache_dir)
    except Exception as error:  # whatever stopped it, the student gets one message saying what to do
        log.warning("downloading %s failed: %r", name, error)
        raise ModelLoadError(
            f"The download of {name!r} stopped after {DownloadProgress(done, total)} "
            f"({_describe(error)}). The files already complete are kept: choose the model again to go on, "
            f"or keep working with the bundled model {BUNDLED_MODEL!r}."
        ) from error
    report(DownloadProgress(total, total))  # every file is in the cache, however many bytes this call wrote
    return Path(folder)


def _wanted_files(name: str, endpoint: str | None) -> tuple[str, dict[str, int], int]:
    """The commit the main branch is at, {file: bytes} of the wanted files it has, and what its weights will take
    in memory as the core holds them, float32 (one request to the Hub).

    Asked before anything is fetched, so that the progress has its total from the first report and a
    repository the app cannot use is refused without downloading a byte of it.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    try:
        info = HfApi(endpoint=endpoint).model_info(name, files_metadata=True)
    except (RepositoryNotFoundError, GatedRepoError) as error:
        raise ModelLoadError(
            f"The Hugging Face Hub has no public model {name!r} ({type(error).__name__}). Check the id in "
            f"the allow-list, or use the bundled model {BUNDLED_MODEL!r}."
        ) from error
    except Exception as error:  # refused, timed out, a proxy's page, the Hub down: all the same to a student
        log.warning("asking the Hub about %s failed: %r", name, error)
        raise ModelLoadError(
            f"The model {name!r} could not be downloaded: the Hugging Face Hub could not be reached "
            f"({_describe(error)}). Check the network connection and choose the model again, "
            f"or keep working with the bundled model {BUNDLED_MODEL!r}, which needs no network."
        ) from error
    sizes = {sibling.rfilename: sibling.size or 0 for sibling in info.siblings or () if sibling.rfilename in FILES}
    for file in REQUIRED:
        if file not in sizes:
            raise ModelLoadError(
                f"The Hub repository {name!r} has no {file}, so it cannot be loaded here "
                "(the weights are read from model.safetensors only)."
            )
    if not any(all(file in sizes for file in vocabulary) for vocabulary in VOCABULARIES):
        ways = ", ".join(" with ".join(vocabulary) for vocabulary in VOCABULARIES)
        raise ModelLoadError(f"The Hub repository {name!r} has no tokenizer: none of {ways}.")
    return info.sha, sizes, _memory_bytes(info, sizes[WEIGHTS])


def _memory_bytes(info, file_bytes: int) -> int:
    """What the weights take once loaded, float32: 4 bytes a parameter where the Hub counts the safetensors'
    parameters (SmolLM2's are stored in bfloat16: 269 MB on disk, 538 MB loaded), else the file's own size."""
    counted = getattr(info, "safetensors", None)
    parameters = getattr(counted, "total", 0) or 0
    return max(file_bytes, FLOAT32_BYTES * parameters)


def _describe(error: Exception) -> str:
    """What went wrong, in a few words a student can act on.

    Looks through the errors huggingface_hub wraps others in (a file it could neither fetch nor find in
    the cache is a LocalEntryNotFoundError raised from the HTTP 503 or the broken connection behind it).
    """
    chain = [error]
    while chain[-1].__cause__ is not None and chain[-1].__cause__ not in chain:
        chain.append(chain[-1].__cause__)
    for cause in chain:
        status = getattr(getattr(cause, "response", None), "status_code", None)
        if status is not None:
            return f"the Hub answered HTTP {status}"
    # httpx's classes, in whichever copy huggingface_hub uses
    kinds = {cls.__name__ for cause in chain for cls in type(cause).__mro__}
    if "TimeoutException" in kinds:
        return "the Hub did not answer in time"
    if "ConnectError" in kinds:
        return "no connection to the Hub"
    if "TransportError" in kinds:
        return "the connection broke off"
    first_line = (str(error).strip().splitlines() or [""])[0][:160]
    return f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__


def _byte_counter(add: Callable[[int], None]) -> type:
    """A tqdm class for snapshot_download that draws nothing and sends every byte written to the cache to add().

    snapshot_download makes three bars of this class: the bytes written to the cache, summed over all
    files (the group BYTES_BAR; a resumed file first adds the bytes it already had, one that must start
    over takes them back with a negative count), the bytes off the network, and the files finished.
    Only the first is counted; the others would count the same bytes twice, or files as bytes.
    """
    from huggingface_hub.utils import tqdm

    class ByteCounter(tqdm):
        def __init__(self, *args, **kwargs):
            self.counts_bytes = kwargs.get("name") == BYTES_BAR
            kwargs["disable"] = True  # the page shows the progress; the server's log stays free of bars
            super().__init__(*args, **kwargs)

        def update(self, n: int | float | None = 1) -> bool | None:
            if self.counts_bytes:
                add(int(n or 0))
            return super().update(n)

    return ByteCounter


class Download:
    """One model's download, run in its own thread; progress and outcome can be read from any thread."""

    def __init__(self, name: str, **where):
        self.name = name
        self._where = where  # endpoint and cache_dir for attention.models.download.download, when not the defaults
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

    endpoint and cache_dir default to HF_ENDPOINT and the Hugging Face cache, where load_model looks;
    max_weights_bytes: the largest model to fetch (attention.models.download.download).
    """

    def __init__(self, *, endpoint: str | None = None, cache_dir: str | None = None,
                 max_weights_bytes: int | None = None) -> None:
        self._lock = threading.Lock()
        self._by_name: dict[str, Download] = {}
        self._where = {"endpoint": endpoint, "cache_dir": cache_dir, "max_weights_bytes": max_weights_bytes}

    def start(self, name: str) -> Download:
        """The model's running or finished download; a fresh one if there was none or the last one failed."""
        with self._lock:
            current = self._by_name.get(name)
            if current is None or current.failed:
                current = self._by_name[name] = Download(name, **self._where)
            return current
