"""What the App does as its server starts (streamlit_app.py's lifespan): import torch, send replies without delay
(components/server/no_delay.py), and open a browser tab.

A page's first run imports torch (about two seconds) before it can draw a heatmap; a new server used to idle
until a browser asked for the page, and only then begin. The import now runs in a thread of its own as the server
starts, so the server answers at once, and a page's run that imports torch meanwhile waits for that import
(Python's import lock) instead of importing it again.

Only torch: the import holds Python's lock for long stretches, which delays the browser's first frame while it
runs (`python -m bench --only cold`: the first element 1.1× the bare page's without it, about 1.3× with torch
warmed, about 1.45× with pandas, pyarrow and Altair warmed after it, for no more gain on the first heatmap).

`streamlit run` opens a tab on a page script's URL unless the server is headless, but not on an App's: the
lifespan does it, as Streamlit does it for a script, so that a learner's `streamlit run streamlit_app.py` still
opens the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator

from streamlit import cli_util, config
from streamlit.web.server import server_util

from components.server.no_delay import no_delay

log = logging.getLogger("attention_anatomy")


@contextlib.asynccontextmanager
async def lifespan(_app) -> AsyncIterator[None]:
    """st.App's lifespan: starts torch's import, sets TCP_NODELAY, asks for the browser tab, and yields at once;
    nothing to undo."""
    threading.Thread(target=_import_torch, name="warm-start", daemon=True).start()
    port = config.get_option("server.port")
    if not no_delay(port):
        log.info("no socket listening on port %s found: replies may wait for the browser's acknowledgement", port)
    asyncio.get_running_loop().call_soon(open_browser_unless_headless)
    yield


def _import_torch() -> None:
    try:
        import torch  # noqa: F401 (imported for the page's runs, which find it in sys.modules)
    except ImportError:  # the page's own import will say what is missing, where the reader sees it
        log.exception("warming up: torch could not be imported")


def open_browser_unless_headless() -> None:
    """A tab on the page, at the address a reader would type (the server's port is bound by now)."""
    if config.get_option("server.headless"):
        return
    address = (config.get_option("browser.serverAddress") if config.is_manually_set("browser.serverAddress")
               else "localhost")
    cli_util.open_browser(server_util.get_url(address))
