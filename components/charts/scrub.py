"""Heatmaps whose layer and head are picked in the browser: every head sent once, Vega draws the one chosen.

A chart's dataset holds one stage of every head of the layers sent (every layer of a short text, else
the current one). Two point selections, each bound to a range input above the chart, pick the layer and
the head, and a formula shows that head's values in the cells (a filter keeps that head's picture, for
pictures): dragging or pressing an arrow key repaints at once, with no round trip to the server.
Streamlit then reports the selection, and a rerun brings the rest of the page (the URL, the shapes panel,
the proof, the downloads) up to it; the chart arrives again unchanged (same spec, same data, so Streamlit
sends only its hash) and is not rebuilt.

The spec holds where the inputs start: the anchor. It stays as it was while the chart itself is what
moves, so that those reruns leave the spec alone; it moves to the page's layer and head when the
chart is drawn anew or something else moved them (a link, a click in the all-heads grid). The spec is
built and kept without it, its inputs at 0, and `placed` sets the anchor into a copy: a new anchor
costs a few dicts, not Altair's building again (300 ms for the neuron chart of a 472-token text).
"""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd

from components.charts.heatmap import (
    MAX_VECTOR_CELLS,
    PICTURE_TOOLTIP,
    PLOT_SIZE,
    TOKEN_BANDS,
    centred,
    colour_scale,
    head_domains,
    label_axis,
    labelled,
    legend,
    picture_url,
    plot_size,
    title_lines,
    token_labels,
)

# What is sent at once, in cells (R·K per head). Every layer, when all their heads fit the first budget
# (a 32-token text on the bundled model: 73,728 cells, about 0.7 MB); else the current layer's heads, when
# they fit the second (a 512-token layer of 12 heads as pictures: about 1.5 MB); else the current head
# alone. What is not sent is fetched by a rerun when the reader moves to it.
ALL_LAYERS_CELLS = {"vector": 2**17, "raster": 2**21}
ONE_LAYER_CELLS = {"vector": 2**18, "raster": 2**22}
# Under the plot: beside it, the legend ran into the side column on a 1280-px screen.
LEGEND = legend(PLOT_SIZE)
LAYER, HEAD = "layer", "head"  # the selections' names, and the fields they pick
ZOOM = "zoom"  # a long text's picture: the rectangle dragged across it, drawn in cells under it (zoom_window)
ZOOM_MOST = 48  # tokens a side of a zoom, at most: a cell of 8 px or more in a 420-px plot, each named on hover
ZOOM_TOOLTIP = "Drag a rectangle across the picture: its cells are drawn larger under it, each named"
CELLS, PICTURES, RANGES = "cells", "pictures", "ranges"  # the datasets
# The chart's own inputs above it, in a row, readable from the back of a room.
INPUT_STYLE = (
    "<style>.vega-embed:has(> .vega-bindings){display:flex;flex-direction:column}"
    ".vega-embed > .vega-bindings{order:-1;display:flex;flex-flow:row wrap !important;gap:.4rem 2rem;margin:0 0 .6rem;"
    "font-size:1rem}"
    ".vega-embed > .vega-bindings > .vega-bind{flex:0 0 auto;width:auto !important}"
    ".vega-embed .vega-bind label{display:flex;align-items:center;gap:.6rem}"
    ".vega-embed .vega-bind-name{font-weight:600;min-width:0 !important;width:auto !important}"
    ".vega-embed .vega-bind input[type=range]{width:7rem !important;accent-color:#1f4e9c}</style>"
)


def send_plan(num_layers: int, num_heads: int, rows: int, columns: int, layer: int, head: int,
              drawn_as: str = "heatmap") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The layers and heads to send, within the budgets above. Lines cost what a heatmap's cells cost."""
    kind = "raster" if drawn_as == "heatmap" and rows * columns > MAX_VECTOR_CELLS else "vector"
    per_head = rows * columns
    every_head = tuple(range(num_heads))
    if num_layers * num_heads * per_head <= ALL_LAYERS_CELLS[kind]:
        return tuple(range(num_layers)), every_head
    if num_heads * per_head <= ONE_LAYER_CELLS[kind]:
        return (layer,), every_head
    return (layer,), (head,)


def cells_under(extent: list[float], count: int) -> range:
    """The cells [0, count) a dragged extent (in cells, either way round) covers, ZOOM_MOST at most."""
    low, high = sorted(float(end) for end in extent)
    start, stop = max(0, int(np.floor(low))), min(count, max(int(np.ceil(high)), int(np.floor(low)) + 1))
    if stop - start > ZOOM_MOST:
        start = (start + stop - ZOOM_MOST) // 2
        stop = start + ZOOM_MOST
    return range(start, max(stop, start + 1))


def panel_frames(values: np.ndarray, layers: tuple[int, ...], heads: tuple[int, ...], scheme: str, raster: bool,
                 name: str, weight_scale: str = "head", layer_values: np.ndarray | None = None
                 ) -> dict[str, pd.DataFrame]:
    """A panel's datasets, named after it, from values (nl, h, R, K), the stage of the given layers' heads: its
    cells or its pictures, and each head's colour range (two rows), which the legend reads and the colours reach
    across (heatmap.head_domains). layer_values: the layers' every head (nl, nh, R, K), when only some are sent and
    the colours reach across the layer's largest weight."""
    domains = head_domains(values, scheme, weight_scale, layer_values)  # (nl, h, 2)
    ranges = pd.DataFrame([{LAYER: layer, HEAD: head, "value": float(value)}
                           for layer, per_layer in zip(layers, domains, strict=True)
                           for head, domain in zip(heads, per_layer, strict=True) for value in domain])
    if raster:
        pictures = _pictures(layers, heads, values, domains, scheme)
        return {f"{name}-{PICTURES}": pictures, f"{name}-{RANGES}": ranges}
    return {f"{name}-{CELLS}": cells_by_head(values), f"{name}-{RANGES}": ranges}


def cells_by_head(values: np.ndarray) -> pd.DataFrame:
    """values (nl, h, R, K) as one line per cell of the matrix: its row and column, then its value in every
    head, in columns "0", "1", … in (layer, head) order. The browser copies the picked head's column into the
    line's value (picked_column): the lines, and the marks drawn from them, stay from move to move and
    only their colours change, where filtering and unfolding rows made every mark anew (a 32-token text on
    the bundled model: 1,024 lines of 72 heads)."""
    layers, heads, rows, columns = values.shape
    row_index, column_index = np.indices((rows, columns))  # each (R, K)
    lines = pd.DataFrame({"row": row_index.ravel().astype(np.uint16), "column": column_index.ravel().astype(np.uint16)})
    by_head = values.reshape(layers * heads, rows * columns).T.astype(np.float32)  # (R·K, nl·h)
    return pd.concat([lines, pd.DataFrame(by_head, columns=_column_names(layers * heads))], axis=1)  # (R·K, 2 + nl·h)


def picked_column(picks: list, heads_sent: int) -> str:
    """The column of a cells dataset (cells_by_head) that holds the picked head: its place in the (layer, head)
    order of the heads sent. A layer or head sent alone is column 0's whatever its input says, so that the
    chart keeps drawing it until the rerun its input asks for brings the next."""
    names = {pick.name for pick in picks}
    layer = f"{LAYER}_{LAYER} * {heads_sent}" if LAYER in names else "0"
    head = f"{HEAD}_{HEAD}" if HEAD in names else "0"
    return f"datum[{layer} + {head}]"


def _column_names(count: int) -> list[str]:
    return [str(column) for column in range(count)]


def _pictures(layers: tuple[int, ...], heads: tuple[int, ...], values: np.ndarray, domains: np.ndarray,
              scheme: str) -> pd.DataFrame:
    """One picture per head sent (values (nl, h, R, K)), each coloured over its domain (domains (nl, h, 2))."""
    rows, columns = values.shape[2:]
    return pd.DataFrame([{LAYER: layer, HEAD: head, "url": picture_url(matrix, domain.tolist(), scheme),
                          "x": 0, "x2": columns, "y": 0, "y2": rows}
                         for layer, per_layer, layer_domains in zip(layers, values, domains, strict=True)
                         for head, matrix, domain in zip(heads, per_layer, layer_domains, strict=True)])


def spec(drawings: tuple[tuple, ...], shape: tuple[int, int], many_layers: bool, many_heads: bool,
          shared_colour: bool, side_by_side: bool = True) -> dict:
    """The chart without its data: the selections bound to inputs (on the first panel), the filters, axes
    and colours of every panel."""
    layer, head, picks = selections(shape, many_layers, many_heads)
    heads_sent = shape[1] if many_heads else 1
    charts = [_panel(drawing, [layer, head] if index == 0 else [], picks, heads_sent)
              for index, drawing in enumerate(drawings)]
    if len(charts) == 1:
        chart = charts[0]
    else:
        concat = alt.hconcat if side_by_side else alt.vconcat
        pair = concat(*charts[:2], spacing=24).resolve_scale(color="shared" if shared_colour else "independent")
        chart = alt.vconcat(pair, *charts[2:], spacing=24).resolve_scale(color="independent") if charts[2:] else pair
    return chart.properties(autosize=alt.AutoSizeParams(type="pad"),
                            usermeta={"embedOptions": {"renderer": "canvas"}}).to_dict(validate=False)


def _panel(drawing: tuple, params: list, picks: list, heads_sent: int) -> alt.TopLevelMixin:
    (name, title, row_labels, column_labels, scheme, row_title, column_title, size, raster, second, lettering,
     zoomable) = drawing
    rows, columns = len(row_labels), len(column_labels)
    width, height = plot_size(rows, columns, size)
    spacing = lettering.label_spacing_px
    x_axis = label_axis(list(column_labels), column_title, columns, angle=-60, length_px=width, spacing_px=spacing,
                        second_from=second[1])
    y_axis = label_axis(list(row_labels), row_title, rows, angle=0, length_px=height, spacing_px=spacing,
                        second_from=second[0])
    colour = colour_scale(scheme)
    key = legend(width, height, lettering.legend_beside)
    if raster:
        zoom = [alt.selection_interval(name=ZOOM, encodings=["x", "y"], zoom=False)] if zoomable else []
        chart = labelled(raster_layers(name, rows, columns, centred(x_axis), centred(y_axis), colour,
                                        [*params, *zoom], picks, key), row_labels, column_labels)
    else:
        cells = vector_cells(name, row_labels, column_labels, x_axis, y_axis, colour, title, params,
                             picked_column(picks, heads_sent), (width / columns, height / rows), key)
        chart = alt.layer(cells, range_carrier(name, colour, picks, key))
    return chart.properties(title=title_lines(title, width + lettering.label_room_px), description=title,
                            width=width, height=height)


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


def vector_cells(name, row_labels, column_labels, x_axis, y_axis, colour, value_title, params, column: str,
                  cell: tuple[float, float], key: alt.Legend = LEGEND) -> alt.Chart:
    """A rect per cell, coloured by the picked head's value (column: picked_column), with its tokens and value
    in the tooltip.

    A move re-evaluates every mark's encoding, expression by expression (Streamlit runs Vega's interpreter,
    not compiled code), so the marks carry as little as they can: cell (px) is a fixed width and height,
    not a bandwidth worked out for each mark; the tooltip is one object, not Vega-Lite's checks on each
    field; and no ARIA description per cell, which is a long string formatted for every mark of a canvas
    no screen reader can enter (the chart keeps its own description).
    """
    # The labels as parameters (the axes' own): an array written into the expression would be built anew for
    # every cell, and a token such as "if" would stop Vega's parser. Vega lists the inputs of a chart's
    # parameters last first: head is added first so that Layer leads.
    chart = alt.Chart(alt.NamedData(name=f"{name}-{CELLS}")).mark_rect(
        aria=False, width=cell[0], height=cell[1]).add_params(*reversed(params))
    chart = labelled(chart, row_labels, column_labels)
    return chart.transform_calculate(
        row_label=f"{token_labels(row_labels).name}[datum.row]",
        column_label=f"{token_labels(column_labels).name}[datum.column]",
    ).transform_calculate(value=column).encode(
        x=alt.X("column:O", axis=x_axis, scale=TOKEN_BANDS),
        y=alt.Y("row:O", axis=y_axis, scale=TOKEN_BANDS),
        color=alt.Color("value:Q", scale=colour, title=None, legend=key),
        tooltip=cell_tooltip(y_axis.title, x_axis.title, value_title),
    )


def cell_tooltip(row_title: str, column_title: str, value_title: str, column: str = "datum.column_label") -> dict:
    """A heatmap cell's tooltip: its row and column labels (column: the expression of the latter) and its
    value, as one expression."""
    return tooltip_of({row_title: "datum.row_label", column_title: column,
                       value_title: "format(datum.value, '.4f')"})


def tooltip_of(entries: dict[str, str]) -> dict:
    """A tooltip of one expression, an object built per mark: entries maps each title to the expression
    of its value (Vega-Lite's own tooltips add checks on every field, on every mark, on every move)."""
    return alt.value(alt.expr("{" + ", ".join(f"{json.dumps(title)}: {expression}"
                                              for title, expression in entries.items()) + "}"))


def raster_layers(name, rows, columns, x_axis, y_axis, colour, params, picks, key: alt.Legend) -> alt.LayerChart:
    """The picked head's picture, and an invisible layer of its colour range that the legend reads."""
    picture = alt.Chart(alt.NamedData(name=f"{name}-{PICTURES}")).mark_image(aspect=False).add_params(
        *reversed(params))
    tooltip = ZOOM_TOOLTIP if any(param.name == ZOOM for param in params) else PICTURE_TOOLTIP
    for pick in picks:
        picture = picture.transform_filter(filter_on(pick))
    picture = picture.encode(
        x=alt.X("x:Q", axis=x_axis, scale=alt.Scale(domain=[0, columns], nice=False, zero=False)), x2="x2",
        y=alt.Y("y:Q", axis=y_axis, scale=alt.Scale(domain=[0, rows], nice=False, reverse=True)), y2="y2",
        url="url:N", tooltip=alt.value(tooltip),  # not the picture's own fields (x, y, a data URL)
    )
    return alt.layer(picture, range_carrier(name, colour, picks, key))


def range_carrier(name: str, colour: alt.Scale, picks: list, key: alt.Legend) -> alt.Chart:
    """An invisible layer of the picked head's colour range (the panel's RANGES dataset): the colour scale,
    which the cells or the picture share with it, then reaches from the range's low end to its high end."""
    carrier = alt.Chart(alt.NamedData(name=f"{name}-{RANGES}")).mark_point(filled=True, opacity=0)
    for pick in picks:
        carrier = carrier.transform_filter(filter_on(pick))
    return carrier.encode(color=alt.Color("value:Q", scale=colour, title=None, legend=key))


def filter_on(selection: alt.Parameter) -> str:
    """A filter keeping the rows the selection picks, as a plain comparison with the value its input holds
    (Vega-Lite names the signal of a point selection's bound field <name>_<field>): a selection test for
    every row cost a layer move about 25 ms more on 2,304 rows."""
    return f"datum.{selection.name} == {selection.name}_{selection.name}"
