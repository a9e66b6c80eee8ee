"""What the switch view's pages have asked the App's route (GET /api/switch) to answer. No torch, no Streamlit.

A press on a toggle fetches the numbers for its set of heads off from the route, before the rerun that draws them.
The route used to read the model and the texts from its query string, so a plain GET from anyone, with no page
open, could make the server rank every head of a text it had never seen: 21 passes of the model over 12 copies of
up to 512 tokens, seconds of a core and hundreds of MB. Now the view registers what it draws (the model and its
texts) here, under an id that the server makes, and the route answers only for ids it holds: an unknown id costs a
dictionary look-up. A known one costs a pass of the model for its heads off, the work a press on the page does.

The id is an HMAC of the ask under a secret drawn when the process starts: the same ask gets the same id (one entry,
however many pages show it), and nobody outside the process can make one, so another site cannot have its visitors'
browsers fire asks either. The newest MAX_ASKS are kept; for an id that has fallen out the route answers 404, and
the press goes by its rerun, as on a page without the route.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping

# The switch views open at once on a server: a class of 60 in it with their own sentences is 60. An ask holds a
# model name and at most two texts of 10,000 characters (20 kB), so MAX_ASKS of them are at most 5 MB.
MAX_ASKS = 256
_ID = re.compile(r"[A-Za-z0-9_-]{22}")  # 16 bytes of HMAC, base64url without padding


class SwitchAsks:
    """Asks by their id, the newest `keep`; safe to use from every thread."""

    def __init__(self, keep: int = MAX_ASKS) -> None:
        self.keep = keep
        self._secret = secrets.token_bytes(32)
        self._asks: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._lock = threading.Lock()

    def register(self, ask: Mapping[str, str]) -> str:
        """Keep ask (the route's inputs, plain strings) and return its id."""
        kept = {name: str(value) for name, value in sorted(ask.items())}
        digest = hmac.new(self._secret, json.dumps(kept).encode(), hashlib.sha256).digest()[:16]
        ask_id = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        with self._lock:
            self._asks[ask_id] = kept
            self._asks.move_to_end(ask_id)
            while len(self._asks) > self.keep:
                self._asks.popitem(last=False)
        return ask_id

    def find(self, ask_id: str) -> dict[str, str] | None:
        """The ask a page registered under ask_id, or None for an id this process did not make or no longer keeps."""
        if not _ID.fullmatch(ask_id):
            return None
        with self._lock:
            ask = self._asks.get(ask_id)
            if ask is None:
                return None
            self._asks.move_to_end(ask_id)  # in use: the last to fall out
            return dict(ask)

    def __len__(self) -> int:
        with self._lock:
            return len(self._asks)


ASKS = SwitchAsks()  # the process's: the page's script threads register, the route's worker threads find
