"""One real Streamlit session, driven over its websocket the way the browser's frontend drives it.

For load tests: thirty of these cost the server what thirty browsers cost it (a session, a script
run per move, every ForwardMsg serialised and sent) and cost the client machine almost nothing.
Used by classroom.py (so bench/load_test.py and tests/deploy/test_load.py) and tests/deploy/test_secrets.py.

The protocol, as Streamlit 1.67 speaks it (streamlit/proto, streamlit/web/server/starlette):

- GET /_stcore/health (the frontend asks it before every connect) sets the XSRF cookie. The
  websocket, /_stcore/stream, sends it back as a cookie and as the second entry of
  Sec-WebSocket-Protocol ("streamlit, <token>"), with the server's own Origin (the server refuses
  a websocket from any other origin).
- The client asks for every run: a BackMsg rerun_script carrying a ClientState (the query string,
  the value of every widget the client has set, the hashes of the elements it holds, and, for a
  widget inside an st.fragment, the fragment's id).
- A run answers with ForwardMsgs: new_session (the run's id and fragments in metadata.run), one
  delta per element (at its metadata.delta_path, tagged with its fragment), page_info_changed (the
  query string the page set), and script_finished with the same run id: FINISHED_SUCCESSFULLY
  after the whole page, FINISHED_FRAGMENT_RUN_SUCCESSFULLY after a fragment alone, and
  FINISHED_EARLY_FOR_RERUN when st.rerun() cut the run short and another one follows.
- An element the client listed as held comes back as a ref_hash instead of its content.
- A chart that takes selections is a widget too: its state is the selection as a JSON string
  ({"selection": {...}}), which the frontend sends when the reader clicks the chart or moves its inputs.
- A button's press is a trigger (WidgetState.trigger_value): sent with one rerun, then forgotten.

Widgets are found by their user key only: a keyed element's id is "$$ID-<hash>-<key>" wherever it
is drawn (sidebar, main area, a fragment, a column).

    async with open_session("http://127.0.0.1:8501", {"text": "time flies"}) as session:
        seconds = await session.set_chart_selection("chart-weights", {"head": [{"head": 3}]})
        weights = session.charts()["chart-weights"].datasets[0].data.data  # every head's weights, as Arrow bytes
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Mapping
from http.cookies import SimpleCookie

from websockets.asyncio.client import ClientConnection, connect

from components.private_hooks import (  # Streamlit's wire messages: no public client speaks them
    Alert,
    BackMsg,
    ClientState,
    DoubleArray,
    Element,
    ForwardMsg,
    StringArray,
    VegaLiteChart,
    WidgetState,
    component_events_id,
    element_key,
)

XSRF_COOKIE = "_streamlit_xsrf"
# A run that has not finished after this long is reported as an error, not waited for.
RUN_TIMEOUT_S = 120.0
FINISHED = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)

DeltaPath = tuple[int, ...]


class RunError(RuntimeError):
    """The server could not run the page (a compile error) or did not finish within the timeout."""


@contextlib.asynccontextmanager
async def open_session(base_url: str, query: Mapping[str, str] | str = "", timeout_s: float = RUN_TIMEOUT_S,
                       forwarded_for: str | None = None) -> AsyncIterator[WebsocketSession]:
    """A new session on the server at base_url, its page opened with query; closed on leaving. forwarded_for: the
    client's address as a proxy on loopback says it (X-Forwarded-For), which the server takes for the page's."""
    session = await WebsocketSession.connect(base_url, query, timeout_s, forwarded_for)
    try:
        yield session
    finally:
        await session.close()


class WebsocketSession:
    """A session's websocket, the page as the last run left it, and the widget values set so far.

    Make one with open_session(). One run at a time: every method that reruns waits for its run
    to finish, as a student who moves a slider waits for the page.
    """

    def __init__(self, websocket: ClientConnection, query_string: str, timeout_s: float) -> None:
        self.query_string = query_string  # as the browser's address bar holds it: the page may change it
        self.timeout_s = timeout_s
        self.open_s = 0.0  # how long the first run took
        self.last_status: int | None = None  # how the last run finished: FINISHED_SUCCESSFULLY or ..._FRAGMENT_...
        self.last_drawn = 0  # how many elements and containers the last run drew (sent, or named by hash)
        self._websocket = websocket
        self._page: dict[DeltaPath, ForwardMsg] = {}  # the delta that drew each element on the page
        self._widget_states: dict[str, WidgetState] = {}  # by widget id: every value this client set
        self._page_script_hash = ""
        self._run_id: str | None = None

    @classmethod
    async def connect(cls, base_url: str, query: Mapping[str, str] | str = "", timeout_s: float = RUN_TIMEOUT_S,
                      forwarded_for: str | None = None, cookies: Mapping[str, str] | None = None
                      ) -> WebsocketSession:
        """Open the websocket and run the page once, as a browser opening base_url/?query does; cookies: what the
        browser already holds for the page, beside the XSRF cookie."""
        query_string = query if isinstance(query, str) else urllib.parse.urlencode(query)
        xsrf_token = await asyncio.to_thread(_xsrf_cookie, base_url)
        forwarded = {} if forwarded_for is None else {"X-Forwarded-For": forwarded_for}
        websocket = await connect(
            base_url.replace("http", "ws", 1) + "/_stcore/stream",
            origin=base_url,
            subprotocols=["streamlit", xsrf_token],
            additional_headers={"Cookie": "; ".join(f"{name}={value}" for name, value in
                                                    {XSRF_COOKIE: xsrf_token, **(cookies or {})}.items()),
                                **forwarded},
            proxy=None,  # loopback: never through a proxy from the environment
            ping_interval=None,  # browsers send no pings; the server's are answered all the same
            max_size=None,  # a 512-token page sends charts of several MB
        )
        session = cls(websocket, query_string, timeout_s)
        try:
            session.open_s = await session.rerun()
        except BaseException:
            await websocket.close()
            raise
        return session

    async def close(self) -> None:
        await self._websocket.close()

    async def rerun(self, fragment_id: str = "") -> float:
        """Run the page (or one fragment of it) with the widget values set; return seconds until it finished."""
        held = self._held_messages()
        state = ClientState(query_string=self.query_string, page_script_hash=self._page_script_hash,
                            fragment_id=fragment_id, cached_message_hashes=list(held))
        state.widget_states.widgets.extend(self._widget_states.values())
        started = time.perf_counter()
        await self._websocket.send(BackMsg(rerun_script=state).SerializeToString())
        try:
            async with asyncio.timeout(self.timeout_s):
                await self._read_until_finished(held)
        except TimeoutError:
            raise RunError(f"the run did not finish within {self.timeout_s:.0f} s") from None
        return time.perf_counter() - started

    async def set_slider(self, key: str, value: float) -> float:
        """Move the slider created with key=key to value, as a drag does; return seconds until the rerun finished.

        A slider inside an st.fragment reruns that fragment only, as in the browser.
        """
        return await self._set_value(key, "slider", double_array_value=DoubleArray(data=[value]))

    @property
    def ran_fragment_alone(self) -> bool:
        """Whether the last run was a fragment's alone, not the whole page's."""
        return self.last_status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY

    async def set_text(self, key: str, value: str) -> float:
        """Type value into the text box (a text area) created with key=key and leave it, as the frontend sends it;
        return seconds until the rerun finished."""
        return await self._set_value(key, "text_area", string_value=value)

    async def set_choice(self, key: str, label: str) -> float:
        """Pick the option shown as label in the pills or segmented control created with key=key, as a click does;
        return seconds until the rerun finished."""
        return await self._set_value(key, "button_group", string_array_value=StringArray(data=[label]))

    async def rerun_fragment_of(self, key: str, kind: str) -> float:
        """Rerun the fragment that drew the element of this kind created with key=key, as the browser does for a
        fragment with run_every; return seconds until the rerun finished."""
        return await self.rerun(fragment_id=self._keyed(key, kind).delta.fragment_id)

    async def set_chart_selection(self, key: str, selection: Mapping[str, list[dict]]) -> float:
        """Send the selection of the chart created with key=key, as the frontend does after a click on it
        or a move of its own inputs (components/charts/scrub.py); return seconds until the rerun finished.

        selection is what the frontend reports: every selection the reader has touched so far, e.g.
        {"head": [{"head": 5}], "layer": [{"layer": 2}]}; it goes as JSON under the chart's widget id.
        A chart inside an st.fragment reruns that fragment only, as in the browser.
        """
        value = json.dumps({"selection": selection}, separators=(",", ":"))  # byte for byte the frontend's
        return await self._set_value(key, "vega_lite_chart", string_value=value)

    async def _set_value(self, key: str, kind: str, **value) -> float:
        """Set the value of the element of this kind created with key=key (value: one WidgetState field, as the
        frontend sends it), kept for every later run; return seconds until the rerun it asks for finished. An element
        inside an st.fragment reruns that fragment only, as in the browser."""
        delta = self._keyed(key, kind)
        widget_id = _element_id(delta.delta.new_element)
        self._widget_states[widget_id] = WidgetState(id=widget_id, **value)
        return await self.rerun(fragment_id=delta.delta.fragment_id)

    async def press_button(self, key: str) -> float:
        """Press the button created with key=key; return seconds until the rerun finished.

        A press is a trigger: sent with this one rerun only, as the frontend drops it once sent.
        A button inside an st.fragment reruns that fragment only, as in the browser.
        """
        delta = self._keyed(key, "button")
        widget_id = delta.delta.new_element.button.id
        self._widget_states[widget_id] = WidgetState(id=widget_id, trigger_value=True)
        try:
            return await self.rerun(fragment_id=delta.delta.fragment_id)
        finally:
            self._widget_states.pop(widget_id, None)

    async def send_trigger(self, key: str, event: str, value: object = True) -> float:
        """Send what setTriggerValue(event, value) sends from the script of the custom component created with key=key:
        the component's trigger aggregate (Streamlit's id for it: its own id and "events"), for this one rerun only,
        as the frontend drops it once sent; return seconds until the rerun finished."""
        delta = self._keyed(key, "bidi_component")
        widget_id = component_events_id(delta.delta.new_element.bidi_component.id)
        payload = json.dumps([{"event": event, "value": value}])
        self._widget_states[widget_id] = WidgetState(id=widget_id, json_trigger_value=payload)
        try:
            return await self.rerun(fragment_id=delta.delta.fragment_id)
        finally:
            self._widget_states.pop(widget_id, None)

    def chart_selection(self, key: str) -> dict[str, list[dict]]:
        """The selection this client last sent for the chart created with key=key ({} before any)."""
        chart_id = self._keyed(key, "vega_lite_chart").delta.new_element.vega_lite_chart.id
        state = self._widget_states.get(chart_id)
        return json.loads(state.string_value)["selection"] if state is not None else {}

    def slider_value(self, key: str) -> float:
        """The value the page shows on the slider created with key=key."""
        slider = self._keyed(key, "slider").delta.new_element.slider
        return (slider.value if slider.set_value else slider.default)[0]

    def slider_range(self, key: str) -> tuple[float, float, float]:
        """The lowest value, the highest and the step of the slider created with key=key."""
        slider = self._keyed(key, "slider").delta.new_element.slider
        return slider.min, slider.max, slider.step

    def kind_of(self, key: str) -> str:
        """What the keyed element created with key=key is ("slider", "button_group", …), "" if none is on the page."""
        return next((element.WhichOneof("type") for _, element in self._elements()
                     if element_key(_element_id(element)) == key), "")

    def widget_keys(self) -> list[str]:
        """The keys of the page's keyed elements (widgets, and charts that take selections), in page order."""
        return [key for _, element in self._elements() if (key := element_key(_element_id(element)))]

    def options(self, key: str) -> list[str]:
        """The options of the pills or segmented control created with key=key, as the page shows them."""
        return [option.content for option in self._keyed(key, "button_group").delta.new_element.button_group.options]

    def elements(self) -> list[Element]:
        """Every element on the page, in page order (containers are not elements)."""
        return [element for _, element in self._elements()]

    def charts(self) -> dict[str, VegaLiteChart]:
        """Each Vega-Lite chart on the page (its spec, and its data as Arrow bytes), by the chart's title.

        Only a chart that takes selections has an id (and so its key); the rest are named by the
        title in their spec, or else by their place on the page ("path 0.1.2").
        """
        charts = {}
        for path, element in self._elements():
            if element.WhichOneof("type") == "vega_lite_chart":
                chart = element.vega_lite_chart
                charts[element_key(chart.id) or _title(chart.spec) or "path " + ".".join(map(str, path))] = chart
        return charts

    def texts(self) -> list[str]:
        """What the page says in words and figures: headings, markdown, captions, alerts, metrics, progress bars."""
        texts = []
        for element in self.elements():
            kind = element.WhichOneof("type")
            if kind in ("markdown", "heading", "alert"):
                texts.append(getattr(element, kind).body)
            elif kind == "progress":
                texts.append(element.progress.text)
            elif kind == "metric":
                texts.append(f"{element.metric.label}: {element.metric.body}")
        return texts

    def errors(self) -> list[str]:
        """Exceptions and error boxes on the page: what a student would see go wrong."""
        errors = []
        for element in self.elements():
            kind = element.WhichOneof("type")
            if kind == "exception":
                errors.append(f"{element.exception.type}: {element.exception.message}")
            elif kind == "alert" and element.alert.format == Alert.ERROR:
                errors.append(element.alert.body)
        return errors

    async def _read_until_finished(self, held: dict[str, ForwardMsg]) -> None:
        """Apply the server's messages to the page until the run this client asked for has finished."""
        started = False
        while True:
            msg = ForwardMsg.FromString(await self._websocket.recv())
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self._start_run(msg)
                started = True
            elif kind == "delta":
                self._page[tuple(msg.metadata.delta_path)] = msg
                self.last_drawn += 1
            elif kind == "ref_hash":
                self._page[tuple(msg.metadata.delta_path)] = held[msg.ref_hash]
                self.last_drawn += 1
            elif kind == "page_info_changed":
                self.query_string = msg.page_info_changed.query_string
            elif kind == "session_event" and msg.session_event.HasField("script_compilation_exception"):
                raise RunError(f"the page does not compile: {msg.session_event.script_compilation_exception.message}")
            elif kind == "script_finished" and started and msg.metadata.run.script_run_id == self._run_id:
                if msg.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise RunError("the page does not compile")
                if msg.script_finished in FINISHED:
                    self.last_status = msg.script_finished
                    self._forget_gone_widgets()
                    return
                # FINISHED_EARLY_FOR_RERUN: st.rerun() was called, the next run follows.

    def _start_run(self, msg: ForwardMsg) -> None:
        """A run starts: the whole page is drawn anew, or only what its fragments drew before."""
        self._run_id = msg.metadata.run.script_run_id
        self.last_drawn = 0
        self._page_script_hash = msg.new_session.page_script_hash
        fragments = set(msg.metadata.run.fragment_ids)
        self._page = {path: delta for path, delta in self._page.items()
                      if fragments and delta.delta.fragment_id not in fragments}

    def _elements(self) -> list[tuple[DeltaPath, Element]]:
        return [(path, self._page[path].delta.new_element) for path in sorted(self._page)
                if self._page[path].delta.WhichOneof("type") == "new_element"]

    def _keyed(self, key: str, kind: str) -> ForwardMsg:
        """The delta that drew the element of this kind created with key=key."""
        for delta in self._page.values():
            element = delta.delta.new_element
            if element.WhichOneof("type") == kind and element_key(_element_id(element)) == key:
                return delta
        raise KeyError(f"no {kind} with key {key!r} on the page")

    def _held_messages(self) -> dict[str, ForwardMsg]:
        """The cacheable elements on the page by hash: the server may send a reference to these instead."""
        return {delta.hash: delta for delta in self._page.values() if delta.metadata.cacheable}

    def _forget_gone_widgets(self) -> None:
        """Values of widgets no longer on the page are not sent again (the frontend drops them too)."""
        on_page = {_element_id(element) for element in self.elements()}
        self._widget_states = {wid: state for wid, state in self._widget_states.items() if wid in on_page}


def _element_id(element: Element) -> str:
    """A widget's id (or a selectable chart's); "" for an element that has none."""
    proto = getattr(element, element.WhichOneof("type"))
    return proto.id if "id" in proto.DESCRIPTOR.fields_by_name else ""


def _title(spec: str) -> str | None:
    """A Vega-Lite spec's title: a string, or the text of a title object."""
    title = json.loads(spec).get("title")
    if isinstance(title, dict):
        title = title.get("text")
    return title if isinstance(title, str) and title else None


def _xsrf_cookie(base_url: str) -> str:
    """Ask the health check, as the frontend does before it connects: the server sets the XSRF cookie there."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    with opener.open(base_url + "/_stcore/health", timeout=30) as answer:
        cookies = SimpleCookie()
        for header in answer.headers.get_all("Set-Cookie") or []:
            cookies.load(header)
    if XSRF_COOKIE not in cookies:
        raise RunError(f"{base_url}/_stcore/health set no {XSRF_COOKIE} cookie: is XSRF protection off?")
    return cookies[XSRF_COOKIE].value


def texts_and_models(base_url: str, query: Mapping[str, str] | str = "") -> tuple[list[str], list[str]]:
    """(what the page says, the model selector's options) of a page freshly opened with query, which must show
    no error: for tests of what a server's settings offer."""
    async def visit():
        async with open_session(base_url, query) as session:
            assert session.errors() == [], session.errors()
            model = next(e.selectbox for e in session.elements()
                         if e.WhichOneof("type") == "selectbox" and e.selectbox.id.endswith("-model"))
            return session.texts(), list(model.options)
    return asyncio.run(visit())
