"""GETs of the App's routes over asyncio's own sockets, for asks that the server holds (components/api/routes.py's
/api/class with version=): many of them at once from one thread, as many pages' scripts send them, where
urllib in worker threads would hold one thread each. No client library: the route answers one small JSON body.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse


class Ask:
    """One GET on a connection of its own: send() it, then answer() or drop() (the client goes, as a page that
    reran drops its ask)."""

    def __init__(self, url: str) -> None:
        self.url = urllib.parse.urlsplit(url)
        self._writer: asyncio.StreamWriter | None = None
        self._reader: asyncio.StreamReader | None = None

    async def send(self) -> Ask:
        self._reader, self._writer = await asyncio.open_connection(self.url.hostname, self.url.port)
        target = self.url.path + (f"?{self.url.query}" if self.url.query else "")
        self._writer.write(f"GET {target} HTTP/1.1\r\nHost: {self.url.netloc}\r\nConnection: close\r\n\r\n".encode())
        await self._writer.drain()
        return self

    async def answer(self) -> tuple[int, dict]:
        """(HTTP status, JSON body), once the server answers (the connection then closes)."""
        try:
            raw = await self._reader.read()
        finally:
            self.drop()
        head, _, body = raw.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if b"transfer-encoding: chunked" in head.lower():
            body = _unchunked(body)
        return status, json.loads(body)

    def drop(self) -> None:
        if self._writer is not None:
            self._writer.close()


def _unchunked(body: bytes) -> bytes:
    whole = b""
    while body:
        size, _, rest = body.partition(b"\r\n")
        length = int(size, 16)
        if not length:
            break
        whole, body = whole + rest[:length], rest[length + 2:]
    return whole


async def get_json(url: str) -> tuple[int, dict]:
    """(HTTP status, JSON body) of one GET, however long the server holds it."""
    return await (await Ask(url).send()).answer()
