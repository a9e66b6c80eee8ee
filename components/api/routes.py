"""The HTTP routes the App serves beside the page (streamlit_app.py: st.App(routes=routes())).

GET /api/switch?ask=ID&off=layer:head,… answers the switch view's toggles: the numbers for a set of heads off, as the
HTML the view itself draws (components/views/switch.answer), so that a press shows them without waiting for a rerun.
It answers only for an ask that a page of this server registered (components/server/switch_asks.py): anything else
is a 404 that costs a dictionary look-up, so a stranger's GET starts no work and leaves nothing behind. A known ask
waits at most SWITCH_WAIT_S for a slot of heavy work, and at most MAX_SWITCH_REQUESTS are under way at once; past
either, 429: the page's press then goes by its rerun, which is the truth in any case.
GET /api/class answers a follower's page: its class's version (components/classroom/class_watch.py), and with
beat=FOLLOWER, counts the follower as there. With version=N, the answer waits while the class is at version N, up
to class_waits.WAIT_S, and comes as soon as the teacher moves it on or ends it (components/server/class_waits.py);
its answer's "waited" says whether it was held (a page asks again at once after an ask that was, after its poll
period after one that was not: the class or the server held all the asks it may). A code that is no live class,
or a class already past N, is answered at once and nothing is held. A class store that does not answer is said in
the answer ("reachable": false), never with a 5xx status: deploy/nginx.conf takes a replica that answers 502 or 503
out of its rotation, and a Redis outage would take out every replica.
Both answer at /api/… and, under server.baseUrlPath, at /BASE/api/… too, where the page (which asks relative to its
own address) finds them; Streamlit mounts an App's routes at the top whatever its base path.
Light to import, as the server starts with it: what the answer computes is imported by the first request a page
asked for, in a worker thread, never on the server's own.
"""

from __future__ import annotations

import functools
import re

import streamlit as st
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive

from components.server.class_store import StoreSettingError, StoreUnavailable, parse_code
from components.server.class_waits import WAIT_S, ClassWaits, NoRoom
from components.server.slots import NoSlotFree
from components.server.switch_asks import ASKS

MAX_QUERY_CHARS = 16_000  # an ask's id and every head of a model of some thousand heads, "layer:head," each
SWITCH_WAIT_S = 2.0  # for a slot; past it the press goes by its rerun (its script gives the route 3 s: head_toggles)
# Requests of the switch route under way at once, waiting or computing. Each holds one of Starlette's 40 worker
# threads, which the class's polls and the page's files need too: a few students pressing at once fit, a loop does
# not take them all.
MAX_SWITCH_REQUESTS = 8
_switch_requests = 0  # under way now; read and written on the server's event loop only


async def switch_numbers(request: Request) -> JSONResponse:
    global _switch_requests
    if len(request.url.query) > MAX_QUERY_CHARS:
        return JSONResponse({"error": "the query is too long"}, status_code=414)
    ask = ASKS.find(request.query_params.get("ask", ""))
    if ask is None:
        return JSONResponse({"error": "no page of this server asked for that: ask is the id the switch view gives "
                                      "its toggles"}, status_code=404)
    if _switch_requests >= MAX_SWITCH_REQUESTS:
        return _busy()
    _switch_requests += 1
    try:
        numbers = await run_in_threadpool(_answer, ask, request.query_params.get("off", ""))
    except ValueError as error:
        return JSONResponse({"error": str(error)}, status_code=400)
    except NoSlotFree:
        return _busy()
    finally:
        _switch_requests -= 1
    return JSONResponse({"html": numbers}, headers={"Cache-Control": "no-store"})


def _busy() -> JSONResponse:
    # 429, not 503: nginx takes a replica that answers 503 out of its rotation (deploy/nginx.conf).
    return JSONResponse({"error": "the server is busy: the page's own run shows the numbers"}, status_code=429,
                        headers={"Retry-After": "1", "Cache-Control": "no-store"})


def _answer(ask: dict[str, str], off: str) -> str:
    # torch, the caches and the view: imported here, off the server's thread, by a request that a page asked for
    from components.caches import work
    from components.views import switch

    with work.heavy_work_within(SWITCH_WAIT_S):
        return switch.answer(ask, off)


_FOLLOWER = re.compile(r"[0-9a-f]{16}")  # seat.Seat's follower_id: secrets.token_hex(8)
_VERSION = re.compile(r"[0-9]{1,15}")


async def class_version(request: Request) -> JSONResponse:
    code, follower = parse_code(request.query_params.get("code", "")), request.query_params.get("beat")
    shown = request.query_params.get("version")
    if code is None:
        return JSONResponse({"error": "code must be a class code: six letters and digits"}, status_code=400)
    if follower is not None and not _FOLLOWER.fullmatch(follower):
        return JSONResponse({"error": "beat must be a follower's id, 16 hexadecimal digits"}, status_code=400)
    if shown is not None and not _VERSION.fullmatch(shown):
        return JSONResponse({"error": "version must be a class's version, a whole number"}, status_code=400)
    waited = False
    try:
        version = await run_in_threadpool(_version, code, follower)
        if shown is not None and version == int(shown):
            gone = functools.partial(_gone, request.receive)
            version, waited = await WAITS.until_moved(code, version, WAIT_S, gone), True
    except StoreSettingError:
        return JSONResponse({"error": "classes are off on this server"}, status_code=404)
    except StoreUnavailable:  # the page says so, and asks again (the store's own error may name its address)
        return JSONResponse({"reachable": False}, headers={"Cache-Control": "no-store"})
    except NoRoom:
        pass  # answered at once: the page asks again after its poll period
    answer = {"reachable": True, "version": version} | ({} if shown is None else {"waited": waited})
    return JSONResponse(answer, headers={"Cache-Control": "no-store"})


def _version(code: str, follower: str | None) -> int | None:
    """The class's version, None once it has ended; beats for follower when given."""
    # Streamlit's caches and the store's client: imported here, off the server's thread
    from components.caches import stores

    return stores.classes().version(code, follower)


def _versions(codes: list[str]) -> dict[str, int | None]:
    from components.caches import stores

    return stores.classes().versions(codes)


async def _gone(receive: Receive) -> None:
    """Returns once the client has gone (a page that reran, or closed, drops its ask): the server's http.disconnect."""
    while (await receive())["type"] != "http.disconnect":
        pass


WAITS = ClassWaits(_versions)  # the asks this process holds


def routes() -> list[Route]:
    """The routes at /api/…, and at /BASE/api/… too under server.baseUrlPath (read as the App is made: `streamlit
    run`'s flags, the config file and the environment are in force by then)."""
    answers = {"/api/switch": switch_numbers, "/api/class": class_version}
    base = st.get_option("server.baseUrlPath").strip("/")
    prefixes = [""] + ([f"/{base}"] if base else [])
    return [Route(prefix + path, endpoint) for prefix in prefixes for path, endpoint in answers.items()]
