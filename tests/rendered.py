"""Charts drawn by Vega itself (vl-convert runs the same Vega as the browser, headless) and read back as a user
sees them: the colour of each cell, the colour of each axis label.

For what no spec states outright: which colour a value gets once Vega has worked out its scale from
every layer's data. A chart from the page (an AppTest element) or a spec (a dict) is drawn with its
datasets inline.
"""

from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
import pyarrow as pa
import vl_convert
from PIL import Image

_RECT_GROUP = re.compile(r'<g class="mark-rect role-mark[^"]*"[^>]*>(.*?)</g>', re.S)
_CELL = re.compile(r'<path[^>]*?d="M(-?[\d.]+),(-?[\d.]+)h([\d.]+)v([\d.]+)[^"]*"[^>]*?'
                   r'fill="rgb\((\d+), (\d+), (\d+)\)"')
_PICTURE = re.compile(r'<image[^>]*href="data:image/png;base64,([^"]+)"')
_TEXT = re.compile(r'<text([^>]*)>([^<]*)</text>')


def svg(chart_or_spec) -> str:
    """The chart as Vega draws it, as SVG."""
    if isinstance(chart_or_spec, dict):
        return vl_convert.vegalite_to_svg(chart_or_spec)
    spec = json.loads(chart_or_spec.proto.spec)
    spec["datasets"] = {data.name: pa.ipc.open_stream(data.data.data).read_all().to_pandas().to_dict("records")
                        for data in chart_or_spec.proto.datasets}
    return vl_convert.vegalite_to_svg(spec)


def cell_colours(drawn: str, shape: tuple[int, int]) -> np.ndarray:
    """(rows, columns, 3) RGB of the first heatmap of cells in a drawn chart, each cell placed by where it is."""
    group = _RECT_GROUP.search(drawn).group(1)
    colours = np.full((*shape, 3), -1, dtype=np.int32)
    for x, y, width, height, *rgb in _CELL.findall(group):
        column, row = round(float(x) / float(width)), round(float(y) / float(height))
        colours[row, column] = [int(channel) for channel in rgb]
    assert (colours >= 0).all(), "a cell was not drawn"
    return colours


def picture_colours(drawn: str, shape: tuple[int, int]) -> np.ndarray:
    """(rows, columns, 3) RGB of the first picture in a drawn chart: each cell's centre pixel."""
    png = base64.b64decode(_PICTURE.search(drawn).group(1))
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(np.int32)
    block = pixels.shape[0] // shape[0]  # pixels per cell
    return pixels[block // 2::block, block // 2::block][: shape[0], : shape[1]]


def label_colours(drawn: str) -> dict[str, tuple[str, str]]:
    """{text: (fill, font weight)} of every text the chart draws (axis labels among them)."""
    shown = {}
    for attributes, text in _TEXT.findall(drawn):
        weight = re.search(r'font-weight="(\w+)"', attributes)
        shown[text] = (re.search(r'fill="([^"]+)"', attributes).group(1), weight.group(1) if weight else "normal")
    return shown


def darkness(rgb: np.ndarray) -> np.ndarray:
    """How dark a colour reads: 255 minus its luminance (Rec. 601), over the last axis."""
    return 255 - (np.asarray(rgb, dtype=np.float64) @ [0.299, 0.587, 0.114])
