"""What the App does as its server starts (streamlit_app.py's lifespan): import torch, send replies without delay
(components/server/no_delay.py), mend how a fragment's run cut short is cleared from the queue to the browser
(components/private_hooks.clear_nested_fragments_too), and open a browser tab.

A page's first run imports torch (about two seconds) before it can draw a heatmap; a new server used to idle
until a browser asked for the page, and only then begin. The import now runs in a thread of its own as the server
starts, so the server answers at once, and a page's run that imports torch meanwhile waits for that import
(Python's import lock) instead of importing it again.

Only torch: the import holds Python's lock for long stretches, which delays the browser's first frame while it
runs (`python -m bench --only cold`: the first element 1.1× the bare page's without it, about 1.3× with torch
warmed, about 1.45× with pandas, pyarrow and Altair warmed after it, for no more gain on the first heatmap).

`streamlit run` opens a tab on a page script's URL unless the server is headless, but not on an App's: the
lifespan does it, as Streamlit does it for a script, so that a learner's `streamlit run streamlit_app.py` still
opens the page. Through the standard library's webbrowser, which the BROWSER variable can point elsewhere; on a
Linux machine without a display, server.headless is true unless set (Streamlit's own default), so no browser is
asked for where there is no screen to show it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import webbrowser
from collections.abc import AsyncIterator

import streamlit as st

from components.private_hooks import clear_nested_fragments_too, keep_made_downloads
from components.server.no_delay import no_delay

log = logging.getLogger("attention_anatomy")


@contextlib.asynccontextmanager
async def lifespan(_app) -> AsyncIterator[None]:
    """st.App's lifespan: starts torch's import, sets TCP_NODELAY, mends the queue's clearing and the made downloads'
    collecting, asks for the browser tab, and yields at once; nothing to undo."""
    threading.Thread(target=_import_torch, name="warm-start", daemon=True).start()
    clear_nested_fragments_too()  # a fragment's run cut short must not leave its nested fragments' messages queued
    keep_made_downloads()  # a chart's picture, made on a click, must outlive other readers' runs until it is fetched
    port = st.get_option("server.port")
    if not no_delay(port):
        log.info("no socket listening on port %s found: replies may wait for the browser's acknowledgement", port)
    asyncio.get_running_loop().call_soon(open_browser_unless_headless)
    yield


def _import_torch() -> None:
    try:
        import torch  # noqa: F401 (imported for the page's runs, which find it in sys.modules)
    except ImportError:  # the page's own import will say what is missing, where the reader sees it
        log.exception("warming up: torch could not be imported")


def open_browser_unless_headless() -> threading.Thread | None:
    """Ask for a tab on the page (the server's port is bound by now), unless the server is headless or no browser
    can reach it; return the thread that asks, or None. A thread: a browser in the terminal (lynx, w3m) runs until
    it is closed, and the server must not wait for it."""
    if st.get_option("server.headless"):
        return None
    address = page_address()
    if address is None:
        return None
    asking = threading.Thread(target=webbrowser.open, args=(address,), name="browser-tab", daemon=True)
    asking.start()
    return asking


def page_address() -> str | None:
    """The page's URL as a reader on this machine would type it, as `streamlit run` opens it for a script: at
    browser.serverAddress when set, else at the address the server listens on (localhost when that is every
    address), on browser.serverPort, under server.baseUrlPath. None for a server on a Unix socket."""
    host, listening = st.get_option("browser.serverAddress"), st.get_option("server.address")
    if host == "localhost" and listening:  # localhost is browser.serverAddress's default: not set, or set to it
        if listening.startswith("unix://"):
            return None
        host = "localhost" if listening in {"0.0.0.0", "::"} else listening
    scheme = "https" if st.get_option("server.sslCertFile") else "http"
    base = st.get_option("server.baseUrlPath").strip("/")
    return f"{scheme}://{host}:{st.get_option('browser.serverPort')}" + (f"/{base}" if base else "")
