"""Fetching an allowed Hub model into the local Hugging Face cache, with byte-level progress.

Only what a BertModel and its tokenizer need is fetched: the config, the safetensors weights and
the tokenizer files (never pytorch_model.bin, TensorFlow, Flax or ONNX copies, which would double
or triple the download; attention.hub lists them). Files land in the ordinary Hugging Face cache, so
`load_model(name)` finds them there afterwards. No Streamlit here: the page's download manager runs
`download` in a thread and reads the progress it reports.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attention.hub import FILES, REQUIRED, VOCABULARIES
from attention.models import BUNDLED_MODEL, ModelLoadError, allowed_hub_ids, resolve

log = logging.getLogger(__name__)

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
             endpoint: str | None = None, cache_dir: str | Path | None = None) -> Path:
    """Fetch an allowed Hub model's files into the cache, reporting progress; return its snapshot folder.

    on_progress is called from this thread with every chunk written (10 MB at a time). Files already
    in the cache are not fetched again. endpoint and cache_dir default to HF_ENDPOINT and HF_HOME's cache.
    Raises ModelLoadError saying what happened and what to do.
    """
    from huggingface_hub import hf_hub_download

    check_can_download(name)
    report = on_progress or (lambda progress: None)
    sizes = _file_sizes(name, endpoint)
    total = sum(sizes.values())
    done = 0
    report(DownloadProgress(0, total))

    def add(n: int) -> None:
        nonlocal done
        done += n
        report(DownloadProgress(done, total))

    folder = None
    for file, size in sizes.items():
        before = done
        try:
            path = hf_hub_download(name, file, endpoint=endpoint, cache_dir=cache_dir, tqdm_class=_byte_counter(add))
        except Exception as error:  # whatever stopped it, the student gets one message saying what to do
            log.warning("downloading %s of %s failed: %r", file, name, error)
            raise ModelLoadError(
                f"The download of {name!r} stopped after {DownloadProgress(before, total)} "
                f"({_describe(error)}). The files already complete are kept: choose the model again to go on, "
                f"or keep working with the bundled model {BUNDLED_MODEL!r}."
            ) from error
        done = before + size  # the file's real size, also when it was already in the cache
        report(DownloadProgress(done, total))
        folder = Path(path).parent
    return folder


def _file_sizes(name: str, endpoint: str | None) -> dict[str, int]:
    """{file: bytes} of the wanted files the repository has, asked of the Hub (one HEAD request each)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import GatedRepoError, RemoteEntryNotFoundError, RepositoryNotFoundError

    sizes = {}
    for file in FILES:
        try:
            metadata = get_hf_file_metadata(hf_hub_url(name, file, endpoint=endpoint), endpoint=endpoint)
        except RemoteEntryNotFoundError:
            if file in REQUIRED:
                raise ModelLoadError(
                    f"The Hub repository {name!r} has no {file}, so it cannot be loaded here "
                    "(the weights are read from model.safetensors only)."
                ) from None
            continue
        except (RepositoryNotFoundError, GatedRepoError) as error:
            raise ModelLoadError(
                f"The Hugging Face Hub has no public model {name!r} ({type(error).__name__}). Check the id in "
                f"the allow-list, or use the bundled model {BUNDLED_MODEL!r}."
            ) from error
        except Exception as error:  # refused, timed out, a proxy's page, the Hub down: all the same to a student
            log.warning("asking the Hub about %s of %s failed: %r", file, name, error)
            raise ModelLoadError(
                f"The model {name!r} could not be downloaded: the Hugging Face Hub could not be reached "
                f"({_describe(error)}). Check the network connection and choose the model again, "
                f"or keep working with the bundled model {BUNDLED_MODEL!r}, which needs no network."
            ) from error
        sizes[file] = metadata.size or 0
    if not any(file in sizes for file in VOCABULARIES):
        raise ModelLoadError(f"The Hub repository {name!r} has neither vocab.txt nor tokenizer.json: no tokenizer.")
    return sizes


def _describe(error: Exception) -> str:
    """What went wrong, in a few words a student can act on."""
    status = getattr(getattr(error, "response", None), "status_code", None)
    if status is not None:
        return f"the Hub answered HTTP {status}"
    kinds = {cls.__name__ for cls in type(error).__mro__}  # httpx's classes, in whichever copy huggingface_hub uses
    if "TimeoutException" in kinds:
        return "the Hub did not answer in time"
    if "ConnectError" in kinds:
        return "no connection to the Hub"
    if "TransportError" in kinds:
        return "the connection broke off"
    first_line = (str(error).strip().splitlines() or [""])[0][:160]
    return f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__


def _byte_counter(add: Callable[[int], None]) -> type:
    """A stand-in for the tqdm class hf_hub_download reports to: every byte written goes to add().

    update() carries the bytes written to disk (plain HTTP and Xet alike); update_transfer() the
    bytes off the network, which are not counted twice. A resumed download that has to start the
    file over calls update() with a negative count.
    """

    class ByteCounter:
        def __init__(self, *args, **kwargs):
            self.n = kwargs.get("initial", 0) or 0
            self.total = kwargs.get("total")

        def __enter__(self):
            return self

        def __exit__(self, *exc_info) -> None:
            return None

        def update(self, n: int | float | None = 1) -> None:
            n = int(n or 0)
            self.n += n
            add(n)

        def update_transfer(self, n: int | float | None = 1) -> None:
            return None

        def set_postfix_str(self, *args, **kwargs) -> None:
            return None

        set_transfer_postfix_str = set_postfix_str

        def refresh(self) -> None:
            return None

        def close(self) -> None:
            return None

    return ByteCounter
