"""The server's start: torch is imported while the server waits for its first reader.

A page's first run imports torch (about two seconds) before it can draw a heatmap; a new server used to idle
until a browser asked for the page, and only then begin. The page's App (streamlit_app.py) calls warm_start as
the server starts; the import runs in a thread of its own, so the server answers at once, and a page's run that
imports torch meanwhile waits for that import (Python's import lock) instead of importing it again.

Only torch: the import holds Python's lock for long stretches, which delays the browser's first frame while it
runs (`python -m bench --only cold`: the first element 1.1× the bare page's without it, about 1.3× with torch
warmed, about 1.45× with pandas, pyarrow and Altair warmed after it, for no more gain on the first heatmap).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator

log = logging.getLogger("attention_anatomy")


@contextlib.asynccontextmanager
async def warm_start(_app) -> AsyncIterator[None]:
    """st.App's lifespan: starts the import and yields at once; nothing to undo at the server's stop."""
    threading.Thread(target=_import_torch, name="warm-start", daemon=True).start()
    yield


def _import_torch() -> None:
    try:
        import torch  # noqa: F401 (imported for the page's runs, which find it in sys.modules)
    except ImportError:  # the page's own import will say what is missing, where the reader sees it
        log.exception("warming up: torch could not be imported")
