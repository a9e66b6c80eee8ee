"""The HTTP routes the App serves beside the page (streamlit_app.py: st.App(routes=ROUTES)).

GET /api/switch answers the switch view's toggles: the numbers for a set of heads off, as the HTML the view itself
draws (components/views/switch.answer), so that a press shows them without waiting for a rerun.
GET /api/class answers a follower's page: its class's version (components/classroom/class_watch.py), and with
beat=FOLLOWER, counts the follower as there. The page asks it every POLL_S and reruns only when the class moved,
where a timed fragment reran the page's script, and the browser drew the page again, at every poll. A class store
that does not answer is said in the answer ("reachable": false), never with a 5xx status: deploy/nginx.conf takes a
replica that answers 502 or 503 out of its rotation, and a Redis outage would take out every replica.
Light to import, as the server starts with it: what the answer computes is imported by the first request, in
a worker thread, never on the server's own.
"""

from __future__ import annotations

import re

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from components.classroom.class_store import StoreSettingError, StoreUnavailable, parse_code

MAX_QUERY_CHARS = 25_000  # two texts of the sidebar's 10,000 characters, escaped, and every head of a large model


async def switch_numbers(request: Request) -> JSONResponse:
    if len(request.url.query) > MAX_QUERY_CHARS:
        return JSONResponse({"error": "the query is too long"}, status_code=414)
    try:
        numbers = await run_in_threadpool(_answer, dict(request.query_params))
    except ValueError as error:
        return JSONResponse({"error": str(error)}, status_code=400)
    return JSONResponse({"html": numbers}, headers={"Cache-Control": "no-store"})


def _answer(query: dict[str, str]) -> str:
    from components.views import switch  # torch and the caches: imported here, off the server's thread

    return switch.answer(query)


_FOLLOWER = re.compile(r"[0-9a-f]{16}")  # classroom.Seat's follower_id: secrets.token_hex(8)


async def class_version(request: Request) -> JSONResponse:
    code, follower = parse_code(request.query_params.get("code", "")), request.query_params.get("beat")
    if code is None:
        return JSONResponse({"error": "code must be a class code: six letters and digits"}, status_code=400)
    if follower is not None and not _FOLLOWER.fullmatch(follower):
        return JSONResponse({"error": "beat must be a follower's id, 16 hexadecimal digits"}, status_code=400)
    try:
        version = await run_in_threadpool(_version, code, follower)
    except StoreSettingError:
        return JSONResponse({"error": "classes are off on this server"}, status_code=404)
    except StoreUnavailable:  # the page says so, and asks again (the store's own error may name its address)
        return JSONResponse({"reachable": False}, headers={"Cache-Control": "no-store"})
    return JSONResponse({"reachable": True, "version": version}, headers={"Cache-Control": "no-store"})


def _version(code: str, follower: str | None) -> int | None:
    """The class's version, None once it has ended; beats for follower when given."""
    from components import caches  # Streamlit's caches and the store's client: imported here, off the server's thread

    return caches.classes().version(code, follower)


ROUTES = [Route("/api/switch", switch_numbers), Route("/api/class", class_version)]
