"""The HTTP routes the App serves beside the page (streamlit_app.py: st.App(routes=ROUTES)).

GET /api/switch answers the switch view's toggles: the numbers for a set of heads off, as the HTML the view itself
draws (components/views/switch.answer), so that a press shows them without waiting for a rerun.
Light to import, as the server starts with it: what the answer computes is imported by the first request, in
a worker thread, never on the server's own.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

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


ROUTES = [Route("/api/switch", switch_numbers)]
