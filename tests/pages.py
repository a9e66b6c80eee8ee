"""Driving the page through Streamlit's AppTest, and reading back what it shows.

Shared by every page test: open the page from a link, check it is healthy (no exception,
no error box), and read a chart's data, title or matrix as the browser would get it.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pandas as pd
import pyarrow as pa
from PIL import Image
from streamlit.testing.v1 import AppTest

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.charts.colours import colour_ramp
from components.charts.label_stand_ins import LABEL
from components.charts.scrub import STRIP
from components.private_hooks import (
    MediaFileManager,
    WidgetState,
    component_events_id,
    element_key,
    run_app_test_with,
)
from components.views.parts.lesson_nav import RUNS, SWITCH_KEY

APP = str(Path(__file__).resolve().parents[1] / "page.py")
TEXT = "time flies like an arrow"  # the page's default text: 7 tokens with [CLS] and [SEP]
LLAMA_TEXT = "what if it rains tomorrow"  # the tiny Llama's link's (tests/page/conftest.py)


def open_page(query: dict[str, str | list[str]] | None = None, **params: str) -> AppTest:
    """The page as a link with these query parameters opens it (not yet checked)."""
    page = AppTest.from_file(APP, default_timeout=120)
    for name, value in {**(query or {}), **params}.items():
        page.query_params[name] = value
    return page.run()


def open_keeping_downloads(query: dict[str, str], **session_state) -> tuple[AppTest, dict]:
    """Open the page (then set session_state and run again, if given) and keep each deferred download's
    callable by its file name, as a click on its button would run it."""
    made = {}
    original = MediaFileManager.add_deferred

    def keep(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        made[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    with patch.object(MediaFileManager, "add_deferred", keep):
        page = open_page(query)
        if session_state:
            for name, value in session_state.items():
                page.session_state[name] = value
            page.run()
    return page, made


def assert_healthy(page: AppTest) -> None:
    """No exception and no error box: what a user would see as the page breaking."""
    assert not page.exception, [e.message for e in page.exception]
    assert not page.error, [e.value for e in page.error]


def charts(page: AppTest) -> list:
    return list(page.get("vega_lite_chart"))


def chart_texts(tree) -> list[str]:
    """The text alternatives of the charts in tree (a page, or a container of it: a lesson step's), unescaped, a
    paragraph each (views/parts/scrubbed.said's)."""
    bodies = "".join(block.proto.body for block in tree.get("html"))
    return [html.unescape(text) for text in re.findall(r'<p class="aa-chart-text"[^>]*>(.*?)</p>', bodies)]


def chart_values(chart, panel: str | None = None) -> pd.DataFrame:
    """The rows a chart shows: its largest dataset, named or not, or the cells of one panel of a chart of
    several ("p0", "p1", …). A chart that holds many heads (components/charts/scrub.py) shows the rows of the
    layer and head its own inputs start at. The colour ranges that every scrubbed panel carries are not its rows,
    nor the bars of a strip under it (scrub.STRIP)."""
    blobs = [d.data.data for d in chart.proto.datasets
             if (panel is None and not d.name.endswith("ranges") and d.name != STRIP) or d.name == f"{panel}-cells"]
    if panel is None and chart.proto.HasField("data") and chart.proto.data.data:
        blobs.append(chart.proto.data.data)
    frames = [pa.ipc.open_stream(blob).read_all().to_pandas() for blob in blobs]
    rows = max(frames, key=len)
    if {"row", "column"} <= set(rows.columns) and "value" not in rows:  # a column per head sent
        return sent_head(rows, chart)
    for name, value in chart_picks(chart).items():
        if name in rows:
            shown = rows[name] == value
            if f"!isValid(datum.{name})" in chart.proto.spec:  # its filter keeps a row with no value at every pick
                shown |= rows[name].isna()
            rows = rows[shown].reset_index(drop=True)
    if "row" in rows and "column" not in rows:  # one line per matrix row, its values in columns "0", "1", …
        values = [name for name in rows.columns if name.isdigit()]
        rows = rows.melt(id_vars=[c for c in rows.columns if c not in values], value_vars=values,
                         var_name="column", value_name="value")
        rows = rows.astype({"column": int}).sort_values(["row", "column"], kind="stable").reset_index(drop=True)
    return rows


def sent_head(cells: pd.DataFrame, chart) -> pd.DataFrame:
    """row, column and value of the head a chart's inputs start at, from cells that hold every head sent in
    columns "0", "1", … in (layer, head) order: every layer's heads, a window of layers' heads (its first layer
    read from the spec's column expression), one layer's heads, or one head; or a column a step, the generation
    view's."""
    heads = [name for name in cells.columns if name.isdigit()]
    shape = {name: high - low + 1 for name, (low, high) in chart_inputs(chart).items()}
    picks = chart_picks(chart)
    per_layer = shape.get("head", 1)
    if "decode_step" in shape:  # a column a step (charts/generation.py)
        place = picks.get("decode_step", 0)
    elif len(heads) == shape.get("layer", 1) * per_layer:
        place = picks.get("layer", 0) * per_layer + picks.get("head", 0)
    elif len(heads) > per_layer and len(heads) % per_layer == 0:  # a window of layers
        first = int(re.search(rf"- (\d+)\) \* {per_layer}\b", chart.proto.spec).group(1))
        place = (picks.get("layer", 0) - first) * per_layer + picks.get("head", 0)
    elif len(heads) == shape.get("head", 1):
        place = picks.get("head", 0)
    else:
        assert len(heads) == 1, f"{len(heads)} heads sent for inputs {shape}"
        place = 0
    picked = cells[["row", "column"]].assign(value=cells[str(place)])
    return picked.sort_values(["row", "column"], kind="stable").reset_index(drop=True)


def select_on_chart(page: AppTest, chart, selection: dict) -> AppTest:
    """What Streamlit's frontend sends after a click on a chart, or a move of its inputs: the selection as
    JSON under the chart's widget id, beside the other widgets' states; then the run it asks for.
    (AppTest cannot click a chart; tests/browser/ do the same in Chromium.)"""
    chosen = WidgetState(id=chart.proto.id, string_value=json.dumps({"selection": selection}))
    return run_app_test_with(page, lambda states: states.widgets.append(chosen))


def fill_lesson(page: AppTest, run: int | None = None) -> AppTest:
    """What the lesson's script sends once the page has been still (components/views/parts/lesson_nav.js): its ask
    for the steps beside the one shown, for the run it was drawn in (run: by default the last); then the run it
    asks for, which draws them."""
    [script] = [element for element in page.get("bidi_component") if element.proto.id.endswith(f"-{SWITCH_KEY}")]
    run = page.session_state[RUNS] if run is None else run
    asked = WidgetState(id=component_events_id(script.proto.id),
                        json_trigger_value=json.dumps([{"event": "fill", "value": run}]))
    return run_app_test_with(page, lambda states: states.widgets.append(asked))


def pick_on_chart(page: AppTest, key: str, **picks: int) -> AppTest:
    """Move a chart's own layer or head inputs (components/charts/scrub.py) to the values given."""
    [chart] = [c for c in charts(page) if c.proto.id.endswith(f"-{key}")]
    return select_on_chart(page, chart, {name: [{name: value}] for name, value in picks.items()})


def chart_matrix(chart, fill: float = 0.0, panel: str | None = None) -> np.ndarray:
    """A heatmap's cells as a (rows, columns) matrix; cells it does not draw hold `fill`."""
    cells = chart_values(chart, panel)
    matrix = np.full((cells["row"].max() + 1, cells["column"].max() + 1), fill, dtype=np.float32)
    matrix[cells["row"], cells["column"]] = cells["value"]
    return matrix


def chart_picks(chart) -> dict[str, float]:
    """{layer, head} that a chart holding many heads (components/charts/scrub.py) shows (or its query, the lab's τ,
    the counting lab's window size): where its own inputs start (the spec), or where the reader moved them since
    (the chart's selection). {} for other charts."""
    picks = {p["name"]: p["value"][0][p["name"]] for p in _bound_params(chart)}
    key = element_key(chart.proto.id)
    if picks and key in chart.root.session_state:
        moved = chart.root.session_state[key]["selection"]
        picks |= {name: points[0][name] for name, points in moved.items() if points}
    return picks


def chart_inputs(chart) -> dict[str, tuple[int, int]]:
    """{layer, head}: the (min, max) of a chart's own range inputs, for a chart that has them."""
    return {p["name"]: (p["bind"]["min"], p["bind"]["max"]) for p in _bound_params(chart)}


_PICKERS = ("layer", "head", "query", "temperature", "win_size", "decode_step")


def _bound_params(chart) -> list[dict]:
    """A chart's layer, head, query, τ, window size and step parameters that are bound to inputs, at its top or in
    its layers."""
    spec = json.loads(chart.proto.spec)
    params = spec.get("params", []) + [p for layer in spec.get("layer", []) for p in layer.get("params", [])]
    return [p for p in params if p.get("bind") and p["name"] in _PICKERS]


def spec_parts(part) -> list[dict]:
    """Every object inside a chart's spec (part: the spec, or any piece of it), depth first: its layers,
    marks, params, inline data."""
    if isinstance(part, dict):
        return [part, *(found for value in part.values() for found in spec_parts(value))]
    if isinstance(part, list):
        return [found for value in part for found in spec_parts(value)]
    return []


def chart_datasets(chart) -> dict[str, pd.DataFrame]:
    """A drawn chart's named datasets, sent beside its spec."""
    return {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets}


def label_values(spec: dict, datasets: dict[str, pd.DataFrame] | None = None) -> dict[str, list]:
    """A chart's parameters that hold values, by name: the value, or, for a label parameter that reads its labels
    from a dataset sent beside the spec (charts/label_stand_ins.with_labels), that dataset's labels."""
    values = {part["name"]: part["value"] for part in spec_parts(spec) if "name" in part and "value" in part}
    for part in spec_parts(spec):
        read = re.fullmatch(rf"pluck\(data\('([^']+)'\), '{LABEL}'\)", str(part.get("expr", "")))
        if "name" in part and read:
            values[part["name"]] = list((datasets or {})[read[1]][LABEL])
    return values


def chart_labels(chart) -> dict[str, list]:
    """label_values of a drawn chart."""
    return label_values(json.loads(chart.proto.spec), chart_datasets(chart))


def chart_cell_labels(chart) -> tuple[list[str], list[str]]:
    """cell_labels of a drawn chart."""
    return cell_labels(json.loads(chart.proto.spec), chart_datasets(chart))


def cell_labels(spec: dict, datasets: dict[str, pd.DataFrame] | None = None) -> tuple[list[str], list[str]]:
    """The labels a heatmap's cells name on hover, rows and columns: the parameters its row_label and
    column_label are read from (heatmap.vector_cells: labels are data, never expression source); datasets: those
    sent beside the spec, where the parameters read their labels."""
    values = label_values(spec, datasets)
    found = {}
    for part in spec_parts(spec):
        if part.get("as") in ("row_label", "column_label") and "calculate" in part:
            found[part["as"]] = values[part["calculate"].split("[", 1)[0]]
    return found["row_label"], found["column_label"]


def chart_title(chart) -> str:
    title = json.loads(chart.proto.spec).get("title", "")
    data_title = isinstance(title, dict) and isinstance(title.get("text"), dict)  # heatmap.DataTitle's
    return title_text(title, chart_labels(chart) if data_title else None)


def title_text(title, labels: dict[str, list] | None = None) -> str:
    """A spec's title as one line: a title broken into lines (lettering.title_lines) is joined again; one whose
    lines are data (heatmap.DataTitle) is read from labels (chart_labels)."""
    if isinstance(title, dict):
        title = title.get("text", "")
    if isinstance(title, dict) and labels is not None and title.get("expr") in labels:
        title = labels[title["expr"]]
    return " ".join(title) if isinstance(title, list) else str(title)


def warnings(page: AppTest) -> str:
    return "\n".join(w.value for w in page.warning)


def weights_of(model, text: str = TEXT, text_b: str | None = None, **settings) -> np.ndarray:
    """The core's attention weights (T, T) for a text, to compare with what the page shows."""
    return build_trace(model, encode(model, text, text_b), TraceSettings(**settings))["weights"][0]


class _TableReader(HTMLParser):
    """The header and the cells of an HTML table: a cell's title (the exact number) when it has one, else its text."""

    def __init__(self) -> None:
        super().__init__()
        self.header: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._title: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr" and not self._in_header():
            self.rows.append([])
        if tag in ("th", "td"):
            self._cell, self._title = [], dict(attrs).get("title")

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            text = self._title if self._title is not None else "".join(self._cell)
            (self.header if tag == "th" else self.rows[-1]).append(text)
            self._cell = None

    def _in_header(self) -> bool:
        return not self.header and not self.rows


def html_table(page: AppTest, testid: str) -> pd.DataFrame:
    """The st.html table marked data-testid=testid as a DataFrame: exact numbers as float32, the rest as text."""
    [body] = [element.proto.body for element in page.get("html") if f'data-testid="{testid}"' in element.proto.body]
    return table_in(body)


def table_in(body: str) -> pd.DataFrame:
    """The one table of an HTML text (components/page/tables.numbers_html's), as html_table reads it."""
    reader = _TableReader()
    reader.feed(body)
    frame = pd.DataFrame(reader.rows, columns=reader.header)
    for name in frame.columns:
        numbers = pd.to_numeric(frame[name], errors="coerce")
        if numbers.notna().all():
            frame[name] = numbers.astype(np.float32) if "." in "".join(frame[name]) else numbers
    return frame


def picture_values(url: str, shape: tuple[int, int], domain: list[float], scheme: str) -> np.ndarray:
    """A heatmap picture (a PNG data URL, one block of pixels per cell) read back into numbers: each
    cell's centre pixel, matched to the nearest colour of the ramp, placed on domain. (rows, columns)."""
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))
    block = pixels.shape[0] // shape[0]  # pixels per cell
    centres = pixels[block // 2::block, block // 2::block].astype(np.int32)  # (rows, columns, 3)
    ramp = colour_ramp(scheme).astype(np.int32)  # (256, 3)
    steps = ((centres[:, :, None, :] - ramp) ** 2).sum(-1).argmin(-1)  # (rows, columns) in 0..255
    low, high = domain
    return low + steps / 255 * (high - low)
