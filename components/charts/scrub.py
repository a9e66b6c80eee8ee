"""Heatmaps whose layer and head are picked in the browser: every head sent once, Vega draws the one chosen.

A chart's dataset holds one stage of every head of the layers sent (every layer of a short text, a window of
layers around the current one on a deep model, else the current one). Two point selections, each bound to a range
input above the chart, pick the layer and the head, and a formula shows that head's values in the cells (a filter
keeps that head's picture, for pictures): dragging or pressing an arrow key repaints at once, with no round trip
to the server. Streamlit then reports the selection, and a rerun brings the rest of the page (the URL, the shapes
panel, the proof, the downloads) up to it; the chart arrives again unchanged (same spec, same data, so Streamlit
sends only its hash) and is not rebuilt.

The spec holds where the inputs start: the anchor, which views/parts/scrubbed.anchor_for decides. The spec is
built and kept without it, its inputs at 0, and `placed` sets the anchor into a copy: a new anchor costs a
few dicts, not Altair's building again (300 ms for the neuron chart of a 472-token text). The cells and
pictures are charts/heatmap.py's, as every heatmap's.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from components.assets import read_beside, style_tag
from components.charts.colour_ranges import head_domains
from components.charts.heatmap import (
    CELLS,
    HEAD,
    LAYER,
    MAX_VECTOR_CELLS,
    PICTURE_TOOLTIP,
    PICTURES,
    RANGES,
    DataTitle,
    cells_by_head,
    filter_on,
    heatmap_panel,
    named,
    picked,
    pictures_by_head,
)
from components.charts.legends import legend
from components.charts.plot_sizes import PLOT_SIZE
from components.charts.token_axes import label_axis, labelled, labels_name

STRIP = "strip"  # the bars under the panels (spec's strip): their dataset's name
STRIP_HEIGHT_PX = 90  # a strip, not a second chart to read

# What is sent at once, in cells (R·K per head). Every layer, when all their heads fit the first budget
# (a 32-token text on the bundled model: 73,728 cells, about 0.7 MB); else as many layers as fit it, three or more,
# around the current one (SmolLM2-135M's 30 layers of 9 heads at 32 tokens: 14 of them); else the current layer's
# heads, when they fit the second (a 512-token layer of 12 heads as pictures: about 1.5 MB); else the current head
# alone. What is not sent is fetched by a rerun when the reader moves to it.
ALL_LAYERS_CELLS = {"vector": 2**17, "raster": 2**21}
ONE_LAYER_CELLS = {"vector": 2**18, "raster": 2**22}
# Under the plot: beside it, the legend ran into the side column on a 1280-px screen.
LEGEND = legend(PLOT_SIZE)
# A long text's picture: the rectangle dragged across it, drawn in cells under it (views/parts/scrubbed.zoom_window).
ZOOM = "zoom"
ZOOM_MOST = 48  # tokens a side of a zoom, at most: a cell of 8 px or more in a 420-px plot, each named on hover
ZOOM_TOOLTIP = "Drag a rectangle across the picture: its cells are drawn larger under it, each named"
# The chart's own inputs above it, in a row, readable from the back of a room: chart_inputs.css, beside this module.
INPUT_STYLE = style_tag(read_beside(__file__, "chart_inputs.css"))


def send_plan(num_layers: int, num_heads: int, rows: int, columns: int, layer: int, head: int,
              drawn_as: str = "heatmap") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The layers and heads to send, within the budgets above. Lines cost what a heatmap's cells cost."""
    kind = "raster" if drawn_as == "heatmap" and rows * columns > MAX_VECTOR_CELLS else "vector"
    per_head = rows * columns
    every_head = tuple(range(num_heads))
    if num_layers * num_heads * per_head <= ALL_LAYERS_CELLS[kind]:
        return tuple(range(num_layers)), every_head
    fitting = ALL_LAYERS_CELLS[kind] // (num_heads * per_head)
    if fitting >= 3:
        return layer_window(num_layers, fitting, layer), every_head
    if num_heads * per_head <= ONE_LAYER_CELLS[kind]:
        return (layer,), every_head
    return (layer,), (head,)


def layer_window(num_layers: int, size: int, layer: int) -> tuple[int, ...]:
    """size of the num_layers layers (3 <= size < num_layers) around layer, drawn in the browser as it moves.

    The windows start at multiples of a stride of half their size, and layer picks the one whose middle it is
    nearest: at least a quarter of the window lies either side of it (one layer, for a window of three), so
    the next move either way is in the window already, drawn with no round trip; the rerun after it keeps the
    window, or hands on to the next, which holds the layer too. A window that moved with every layer would
    send its layers anew after every move; these change once every stride moves."""
    stride = max(1, size // 2)
    start = stride * round((layer - (size - 1) / 2) / stride)  # the stride's multiple nearest a centred start
    start = min(max(start, 0), num_layers - size)
    return tuple(range(start, start + size))


def cells_under(extent: list[float], count: int) -> range:
    """The cells [0, count) a dragged extent (in cells, either way round) covers, ZOOM_MOST at most."""
    low, high = sorted(float(end) for end in extent)
    start, stop = max(0, int(np.floor(low))), min(count, max(int(np.ceil(high)), int(np.floor(low)) + 1))
    if stop - start > ZOOM_MOST:
        start = (start + stop - ZOOM_MOST) // 2
        stop = start + ZOOM_MOST
    return range(start, max(stop, start + 1))


def panel_frames(values: np.ndarray, layers: tuple[int, ...], heads: tuple[int, ...], scheme: str, raster: bool,
                 name: str, weight_scale: str = "head", layer_values: np.ndarray | None = None,
                 weights: bool = False) -> dict[str, pd.DataFrame]:
    """A panel's datasets, named after it, from values (nl, h, R, K), the stage of the given layers' heads: its
    cells or its pictures, and each head's colour range (two rows), which the legend reads and the colours reach
    across (colour_ranges.head_domains). layer_values: the layers' every head (nl, nh, R, K), when only some are
    sent and the colours reach across the layer's largest weight. weights: the values are attention weights, whose
    colours end no lower than a few times a uniform row's (colour_ranges.head_domains)."""
    domains = head_domains(values, scheme, weight_scale, layer_values, weights)  # (nl, h, 2)
    ranges = pd.DataFrame([{LAYER: layer, HEAD: head, "value": float(value)}
                           for layer, per_layer in zip(layers, domains, strict=True)
                           for head, domain in zip(heads, per_layer, strict=True) for value in domain])
    if raster:
        pictures = pictures_by_head(values, domains, scheme, layers, heads)
        return {f"{name}-{PICTURES}": pictures, f"{name}-{RANGES}": ranges}
    return {f"{name}-{CELLS}": cells_by_head(values), f"{name}-{RANGES}": ranges}


def spec(drawings: tuple[tuple, ...], shape: tuple[int, int], layers_from: int | None, many_heads: bool,
          shared_colour: bool, side_by_side: bool = True, strip: tuple | None = None) -> dict:
    """The chart without its data: the selections bound to inputs (on the first panel), the filters, axes
    and colours of every panel. layers_from: the first of the layers sent, None when one is sent alone. strip:
    (title, labels, width, lettering) of bars under the panels, one a label, picked by the same inputs
    (strip_frame's dataset): drawn by another chart, they were redrawn by every rerun."""
    layer, head, picks = selections(shape, layers_from is not None, many_heads)
    heads_sent = shape[1] if many_heads else 1
    charts = [_panel(drawing, [layer, head] if index == 0 else [], picks, heads_sent, layers_from or 0)
              for index, drawing in enumerate(drawings)]
    if strip is not None:
        charts.append(_strip(*strip, picks))
        side_by_side = side_by_side and len(drawings) > 1
    if len(charts) == 1:
        chart = charts[0]
    else:
        concat = alt.hconcat if side_by_side else alt.vconcat
        pair = concat(*charts[:2], spacing=24).resolve_scale(color="shared" if shared_colour else "independent")
        chart = alt.vconcat(pair, *charts[2:], spacing=24).resolve_scale(color="independent") if charts[2:] else pair
    return chart.properties(autosize=alt.AutoSizeParams(type="pad"),
                            usermeta={"embedOptions": {"renderer": "canvas"}}).to_dict(validate=False)


def strip_frame(values: np.ndarray, layers: tuple[int, ...], heads: tuple[int, ...]) -> pd.DataFrame:
    """values (nl, h, K), one number a label of each head sent -> one row a (layer, head, label): the strip's
    dataset, STRIP."""
    nl, h, count = values.shape
    layer, head, key = np.meshgrid(np.asarray(layers), np.asarray(heads), np.arange(count), indexing="ij")
    return pd.DataFrame({LAYER: layer.ravel().astype(np.uint8), HEAD: head.ravel().astype(np.uint8),
                         "key": key.ravel().astype(np.uint16), "norm": values.astype(np.float32).ravel()})


def _strip(title: str, labels: tuple[str, ...], width: int, lettering, picks: list) -> alt.Chart:
    """The picked head's bars, one a label: its title names the layer and head the inputs hold."""
    bars = alt.Chart(alt.NamedData(name=STRIP)).mark_bar(color="#4592c6")
    for pick in picks:
        bars = bars.transform_filter(filter_on(pick))
    axis = label_axis(list(labels), "key token", len(labels), angle=-60, length_px=width,
                      spacing_px=lettering.label_spacing_px)
    heading = alt.ExprRef(f"'{title}, layer ' + {picked(LAYER)} + ', head ' + {picked(HEAD)}")
    chart = bars.transform_calculate(token=f"{labels_name(list(labels))}[datum.key]").encode(
        x=alt.X("key:O", axis=axis, scale=alt.Scale(paddingInner=0.15)),
        y=alt.Y("norm:Q", title="‖f(x_j)‖", axis=alt.Axis(tickCount=3)),
        tooltip=[alt.Tooltip("token:N", title="key token"), alt.Tooltip("norm:Q", title="‖f(x_j)‖", format=".3f")],
    ).properties(title=alt.TitleParams(text=heading), width=width, height=STRIP_HEIGHT_PX)
    return labelled(chart, list(labels))


def _panel(drawing: tuple, params: list, picks: list, heads_sent: int, first_layer: int) -> alt.TopLevelMixin:
    (name, title_lines, about, row_labels, column_labels, scheme, row_title, column_title, size, raster, second,
     lettering, zoomable, kept_rows) = drawing
    zoom = [alt.selection_interval(name=ZOOM, encodings=["x", "y"], zoom=False)] if raster and zoomable else []
    return heatmap_panel(named(name, PICTURES if raster else CELLS), named(name, RANGES), raster, row_labels,
                         column_labels, title=DataTitle(title_lines, about), row_title=row_title,
                         column_title=column_title, scheme=scheme,
                         size=size, lettering=lettering, second=second, kept_rows=kept_rows, params=[*params, *zoom],
                         picks=picks, heads_sent=heads_sent, first_layer=first_layer,
                         tooltip=ZOOM_TOOLTIP if zoomable else PICTURE_TOOLTIP)


def selections(shape: tuple[int, int], many_layers: bool, many_heads: bool):
    """The layer and head selections, each bound to a range input (at 0: see `placed`), and those of them
    that filter the data.

    When only one layer (or head) is sent, the data hold only it: its input then asks for a rerun, and
    the chart keeps drawing what it has until the next one arrives.
    """
    layer = picker(LAYER, "Layer", shape[0])
    head = picker(HEAD, "Head", shape[1])
    return layer, head, [pick for pick, many in ((layer, many_layers), (head, many_heads)) if many]


def picker(name: str, label: str, count: int) -> alt.Parameter:
    """A point selection of the field name, bound to a range input from 0 to count - 1 that starts at 0
    (`placed` moves it)."""
    # clear=False: a double click on the chart would otherwise empty the selection, and the chart with it.
    return alt.selection_point(name=name, fields=[name], value=[{name: 0}], clear=False,
                               bind=alt.binding_range(min=0, max=max(count - 1, 0), step=1, name=label))


def placed(spec: dict, anchor: dict[str, int]) -> dict:
    """A copy of a kept spec whose pickers start where anchor says ({selection name: value}); the kept
    spec itself is left as it is, shared by every position and session."""
    params = [{**param, "value": [{param["name"]: anchor[param["name"]]}]}
              if "select" in param and param["name"] in anchor else param for param in spec["params"]]
    return {**spec, "params": params}

