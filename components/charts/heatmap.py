"""The one heatmap builder: every matrix on the page (weights, scores, context vectors, differences, sums of
heads, the labs' maps) is drawn with these cells and pictures. heatmap_panel draws one on token axes, whether it
stands still (heatmap) or its layer and head are picked in the browser (charts/scrub.py, the all-heads summary in
charts/grid.py: several heads in one dataset, the picked one shown); the counting lab's maps are its cells
(vector_cells) on axes of their own; many small maps in one view (the all-heads grid, the induction lab's heads) are
its pictures, placed by their data (placed_picture, placed_pictures).

A masked cell (a key its query may not look at: −∞ in the masked scores) is drawn grey, in cells and pictures
alike, and left out of the colour range (masked.unmasked); crossed, and a negative one barred, where cells are big
enough (cell_marks), and hatched in a picture (masked.hatched), so that neither rides on colour alone. Small
matrices are drawn as one rect mark per cell, with a tooltip. Large ones (a 512-token text has 262,144 cells) are
drawn as a single raster image under the same axes, which the browser paints in milliseconds instead of seconds.
Plain functions of numbers -> Altair charts, testable without a server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from components.charts.cell_marks import cell_marks
from components.charts.clipped import CLIP_END, CLIP_ENDS, CLIP_RINGS, clip_end, clip_frames, clipped_rings
from components.charts.colour_ranges import colour_domain
from components.charts.colours import colour_scale
from components.charts.legends import legend
from components.charts.lettering import READING, Lettering, title_lines
from components.charts.masked import MASKED_COLOUR, masked_as_missing
from components.charts.palettes import drawn_scheme
from components.charts.pictures import picture_url, pooled
from components.charts.plot_sizes import MIN_ROW_PX, PLOT_SIZE, plot_size
from components.charts.token_axes import TOKEN_BANDS, centred, label_axis, labelled, labels_name
from components.private_hooks import bound_input_signal

# Above this many cells a chart becomes a raster image (one mark instead of one per cell).
MAX_VECTOR_CELLS = 64 * 64
PICTURE_TOOLTIP = "Too many cells to name one by one at this size"
# A cell holds no number to colour: masked (cells_by_head sends it as NaN).
MASKED = "!isValid(datum.value) || !isFinite(datum.value)"
# What a masked cell's tooltip gives as its value; the chart's title, the tooltip's name of the value, says which keys
# the mask hides (the outline's formula: "scaled + M (−∞ at padding and keys after the query)").
MASKED_VALUE = "masked: −∞, so its weight is 0"
SUBTITLE_WIDER = 1.4  # a subtitle's letters are about 0.7 as wide as its title's: as many more to a line
Data = alt.NamedData | pd.DataFrame  # a dataset sent by name beside the spec (named), or held in the chart

LAYER, HEAD = "layer", "head"  # the selections that pick a head in the browser, and the fields they pick
CELLS, PICTURES, RANGES = "cells", "pictures", "ranges"  # a panel's datasets: "<panel>-cells", …


def cells_by_head(values: np.ndarray) -> pd.DataFrame:
    """values (nl, h, R, K) as one line per cell of the matrix: its row and column, then its value in every
    head, in columns "0", "1", … in (layer, head) order. The browser copies the picked head's column into the
    line's value (picked_column): the lines, and the marks drawn from them, stay from move to move and
    only their colours change, where filtering and unfolding rows made every mark anew (a 32-token text on
    the bundled model: 1,024 lines of 72 heads). A masked cell is NaN (masked.masked_as_missing): null in Arrow."""
    layers, heads, rows, columns = values.shape
    row_index, column_index = np.indices((rows, columns))  # each (R, K)
    lines = pd.DataFrame({"row": row_index.ravel().astype(np.uint16), "column": column_index.ravel().astype(np.uint16)})
    by_head = masked_as_missing(values.reshape(layers * heads, rows * columns).T.astype(np.float32))  # (R·K, nl·h)
    return pd.concat([lines, pd.DataFrame(by_head, columns=_column_names(layers * heads))], axis=1)  # (R·K, 2 + nl·h)


def picked_column(picks: list, heads_sent: int, first_layer: int = 0) -> str:
    """The column of a cells dataset (cells_by_head) that holds the picked head: its place in the (layer, head)
    order of the heads sent, whose layers start at first_layer (a window of a deep model's layers). A layer or head
    sent alone is column 0's whatever its input says, so that the chart keeps drawing it until the rerun its input
    asks for brings the next."""
    names = {pick.name for pick in picks}
    at = f"({picked(LAYER)} - {first_layer})" if first_layer else picked(LAYER)
    layer = f"{at} * {heads_sent}" if LAYER in names else "0"
    head = picked(HEAD) if HEAD in names else "0"
    return f"datum[{layer} + {head}]"


def _column_names(count: int) -> list[str]:
    return [str(column) for column in range(count)]


def pictures_by_head(values: np.ndarray, domains: np.ndarray, scheme: str, layers: tuple[int, ...],
                     heads: tuple[int, ...]) -> pd.DataFrame:
    """One picture per head sent (values (nl, h, R, K)), each coloured over its domain (domains (nl, h, 2)): a row
    a head, its layer and head, then picture_row's fields."""
    return pd.DataFrame([{LAYER: layer, HEAD: head, **picture_row(matrix, domain.tolist(), scheme)}
                         for layer, per_layer, layer_domains in zip(layers, values, domains, strict=True)
                         for head, matrix, domain in zip(heads, per_layer, layer_domains, strict=True)])


def picture_row(matrix: np.ndarray, domain: list[float], scheme: str, reverse: bool = False) -> dict:
    """matrix (R, K) as one picture (its url) on the cells' axes, from 0 to K across and 0 to R down, scheme's role
    in the reader's palette (palettes.drawn_scheme), as the cells' colour_scale draws it."""
    rows, columns = matrix.shape
    return {"url": picture_url(matrix, domain, drawn_scheme(scheme), reverse=reverse), "x": 0, "x2": columns, "y": 0,
            "y2": rows}


def vector_cells(cells: Data, labels: tuple[str, str], x_axis, y_axis, colour, value_title, params,
                 column: str | None, cell: tuple[float, float] | None, key: alt.Legend, aria: bool = False,
                 keep: str | None = None, missing: str = MASKED_VALUE) -> alt.Chart:
    """A rect per cell of cells (a line a cell: its row, its column, its values), coloured by the value the column
    expression reads (picked_column: the picked head's, of cells_by_head's lines; None: the line's own "value"),
    with its row's and column's labels (labels: their expressions) and its value in the tooltip; a masked cell
    grey, and named masked (missing: what its tooltip says instead of a value). keep: a filter of the lines drawn
    (None: all).

    A move re-evaluates every mark's encoding, expression by expression (Streamlit runs Vega's interpreter,
    not compiled code), so the marks carry as little as they can: cell (px) is a fixed width and height,
    not a bandwidth worked out for each mark (None: the band's, where a move changes how many cells there are);
    the tooltip is one object, not Vega-Lite's checks on each field; and no ARIA description per cell (unless
    aria), which is a long string formatted for every mark of a canvas no screen reader can enter (the chart keeps
    its own description). A heatmap that stands still takes aria: its cells, drawn as SVG, are elements a screen
    reader and a browser test can find. The lines are filtered before their labels are looked up.
    """
    # The labels read from parameters (the axes' own): an array written into the expression would be built anew for
    # every cell, and a token such as "if" would stop Vega's parser. Vega lists the inputs of a chart's
    # parameters last first: head is added first so that Layer leads.
    # invalid=None: Vega-Lite would leave a cell without a number out (a hole in the plot); it is drawn grey instead.
    size = {} if cell is None else {"width": cell[0], "height": cell[1]}
    chart = alt.Chart(cells).mark_rect(aria=aria, invalid=None, **size).add_params(*reversed(params))
    if keep is not None:
        chart = chart.transform_filter(keep)
    chart = chart.transform_calculate(row_label=labels[0], column_label=labels[1])
    if column is not None:
        chart = chart.transform_calculate(value=column)
    return chart.encode(
        x=alt.X("column:O", axis=x_axis, scale=TOKEN_BANDS),
        y=alt.Y("row:O", axis=y_axis, scale=TOKEN_BANDS),
        color=alt.condition(MASKED, alt.value(MASKED_COLOUR), alt.Color("value:Q", scale=colour, title=None,
                                                                          legend=key)),
        tooltip=cell_tooltip(y_axis.title, x_axis.title, value_title, missing=missing),
    )


def cell_tooltip(row_title: str, column_title: str, value_title: str, column: str = "datum.column_label",
                 missing: str = MASKED_VALUE) -> dict:
    """A heatmap cell's tooltip: its row and column labels (column: the expression of the latter) and its
    value (missing's words, for a masked cell), as one expression."""
    return tooltip_of({row_title: "datum.row_label", column_title: column,
                       value_title: f"{MASKED} ? {json.dumps(missing)} : format(datum.value, '.4f')"})


def tooltip_of(entries: dict[str, str]) -> dict:
    """A tooltip of one expression, an object built per mark: entries maps each title to the expression
    of its value (Vega-Lite's own tooltips add checks on every field, on every mark, on every move)."""
    return alt.value(alt.expr("{" + ", ".join(f"{json.dumps(title)}: {expression}"
                                              for title, expression in entries.items()) + "}"))


def raster_layers(pictures: Data, ranges: Data, rows, columns, x_axis, y_axis, colour, params, picks,
                  key: alt.Legend, tooltip: str = PICTURE_TOOLTIP) -> alt.LayerChart:
    """The picked head's picture (one row of pictures a head: url, x, x2, y, y2), and an invisible layer of its
    colour range (ranges) that the legend reads."""
    picture = alt.Chart(pictures).mark_image(aspect=False).add_params(*reversed(params))
    for pick in picks:
        picture = picture.transform_filter(filter_on(pick))
    picture = picture.encode(
        x=alt.X("x:Q", axis=x_axis, scale=alt.Scale(domain=[0, columns], nice=False, zero=False)), x2="x2",
        y=alt.Y("y:Q", axis=y_axis, scale=alt.Scale(domain=[0, rows], nice=False, reverse=True)), y2="y2",
        url="url:N", tooltip=alt.value(tooltip),  # not the picture's own fields (x, y, a data URL)
    )
    return alt.layer(picture, range_carrier(ranges, colour, picks, key))


def range_carrier(ranges: Data, colour: alt.Scale, picks: list, key: alt.Legend) -> alt.Chart:
    """An invisible layer of the picked head's colour range (a "value" per end): the colour scale, which the
    cells or the picture share with it, then reaches from the range's low end to its high end. Filled points,
    so that they colour the fill as the cells do: points' strokes made a second legend."""
    # Of no size and no tooltip: unseen in the middle of the plot, a point took the pointer from the cells under it.
    carrier = alt.Chart(ranges).mark_point(filled=True, opacity=0, size=0, aria=False)
    for pick in picks:
        carrier = carrier.transform_filter(filter_on(pick))
    return carrier.encode(color=alt.Color("value:Q", scale=colour, title=None, legend=key), tooltip=alt.value(None))


def filter_on(selection: alt.Parameter) -> str:
    """A filter keeping the rows the selection picks, as a plain comparison with the value it holds (picked): a
    selection test for every row cost a layer move about 25 ms more on 2,304 rows."""
    return f"datum.{selection.name} == {picked(selection.name)}"


def picked(name: str) -> str:
    """The value a picker (a point selection of one field, named as its field, bound to an input) holds, as an
    expression: its input's signal (private_hooks.bound_input_signal says why not Vega-Lite's `name.name`, whose
    store Streamlit sets back to the reader's last pick when the server sends the chart a new value)."""
    return bound_input_signal(name)


def named(panel: str, dataset: str) -> alt.NamedData:
    """A panel's dataset, sent beside the spec by its name ("p0-cells"): its numbers swap without a new spec."""
    return alt.NamedData(name=f"{panel}-{dataset}")


def heatmap_frames(matrix: np.ndarray, scheme: str = "blues", domain: list[float] | None = None,
                   clip_at: float | None = None) -> dict[str, pd.DataFrame]:
    """The datasets of heatmap(matrix, …, scheme=scheme, domain=domain, clip_at=clip_at) drawn as cells, by the names
    draw.show gives them: a view that keeps the spec of a heatmap (the same for every matrix of its size) sends these
    alone (tests/charts/test_heatmap.py holds them to show's own)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.size > MAX_VECTOR_CELLS:
        raise ValueError(f"a {matrix.shape} matrix is drawn as a picture, not as cells")
    frames = {"data-0": cells_by_head(matrix[None, None])}
    if clip_at is not None:
        return frames | clip_frames(matrix, clip_at, raster=False)
    if _carries_range(scheme, domain):
        frames["data-1"] = pd.DataFrame({"value": colour_domain(matrix, scheme, domain)})
    return frames


def _carries_range(scheme: str, domain: list[float] | None) -> bool:
    """Whether a heatmap drawn as cells carries its colour range as data (range_carrier): Vega's own domain would be
    the data's, lopsided for signed values and narrower than a range two charts share."""
    return domain is not None or scheme == "redblue"


def heatmap(
    matrix: np.ndarray,
    row_labels: list[str],
    column_labels: list[str],
    *,
    title: str,
    row_title: str = "query token",
    column_title: str = "key token",
    scheme: str = "blues",
    size: int = PLOT_SIZE,
    domain: list[float] | None = None,
    canvas: bool = False,
    reverse: bool = False,
    second_sentence: tuple[int | None, int | None] = (None, None),
    lettering: Lettering = READING,
    clip_at: float | None = None,
) -> alt.Chart:
    """matrix (rows, columns) -> a heatmap with the labels on both axes: the cells or the picture of a chart
    picked in the browser, holding one head.

    "blues" suits weights: 0 to the largest; "redblue" suits signed values: white at 0, and as far
    below as above it (colour_domain). size is the longer side of the plot in px (lettering says how close its
    labels may stand); domain is a range the colour scale must cover (so that two charts share one), carried
    as data like the numbers themselves. reverse darkens the small values instead of the large ones.
    second_sentence: the first row and the first column of a sentence pair's sentence B (None: no B there),
    marked on the axes.
    clip_at: a "redblue" scale's ends, ±clip_at whatever the data (colour_ranges.robust_bound); the cells beyond
    them are drawn at the end colours, each ringed (clip_note says how many and how far they reach). The ends and
    the rings are data (CLIP_ENDS, read by the parameter clip_end), so that a new clip_at changes no spec.
    canvas draws it on a canvas: a 32-token heatmap redraws in a fraction of the time its 1,024 SVG
    elements take (Streamlit switches by itself only above 2,000 cells), but its cells are no longer
    elements of the page a test or a script can find, nor a screen reader: they get no ARIA description each (a
    string Vega formats for every cell at every redraw, for nothing), and the chart keeps its own.

    The colour scale is left to Vega and computed from the data in the browser: the spec then stays the
    same when only the numbers change (another head, another layer, another shared range), and Streamlit
    swaps the data into the drawn chart instead of building it anew (a few times cheaper in the browser).
    """
    matrix = np.asarray(matrix, dtype=np.float32)
    rows, columns = matrix.shape
    raster = rows * columns > MAX_VECTOR_CELLS
    clipping = clip_frames(matrix, clip_at, raster) if clip_at is not None else {}
    ends = clipping.get(CLIP_ENDS, pd.DataFrame({"value": colour_domain(matrix, scheme, domain)}))
    data = (pd.DataFrame([picture_row(matrix, ends["value"].tolist(), scheme, reverse)]) if raster
            else cells_by_head(matrix[None, None]))
    # The ends and the rings as data, the rings' layer there when no cell is clipped: the spec stays
    over = [clipped_rings(clipping[CLIP_RINGS], raster, title)] if clipping else []
    chart = heatmap_panel(data, ends if raster or _carries_range(scheme, domain) else None, raster, row_labels,
                          column_labels, title=title, row_title=row_title, column_title=column_title, scheme=scheme,
                          size=size, lettering=lettering, second=second_sentence, reverse=reverse, clip_at=clip_at,
                          aria=not canvas, over=over)  # a canvas has no cells to describe: its chart is described
    # "pad" keeps the plot at its size and puts axes and legend around it; Streamlit's default
    # ("fit") squeezes them into it, which flattens a short, wide matrix to nothing.
    chart = chart.properties(autosize=alt.AutoSizeParams(type="pad"))
    if canvas:
        chart = chart.properties(usermeta={"embedOptions": {"renderer": "canvas"}})
    return chart


@dataclass(frozen=True)
class DataTitle:
    """A title whose words are data, so that a control which changes only them leaves the chart's spec as it was
    (Streamlit builds a chart anew when its spec changes, and swaps the numbers of one whose spec stayed). lines:
    the title's lines as a label list (label_stand_ins: stand-ins in a kept spec, the real lines sent beside it as
    a dataset, read by a parameter); description: what the chart is, in words that stay, naming it for screen
    readers and its cells' values in their tooltips."""

    lines: tuple[str, ...]
    description: str


def panel_title_lines(title: str, rows: int, columns: int, size: int,
                      lettering: Lettering = READING) -> tuple[str, ...]:
    """A heatmap_panel's title broken into lines as titled() breaks a title of words, for a DataTitle."""
    width = plot_size(rows, columns, size, max(MIN_ROW_PX, lettering.label_spacing_px))[0]
    return tuple(title_lines(title, width + lettering.label_room_px))


def heatmap_panel(data: Data, ranges: Data | None, raster: bool, row_labels, column_labels, *,
                  title: str | alt.TitleParams | DataTitle, value_title: str | None = None,
                  row_title: str = "query token",
                  column_title: str = "key token", scheme: str = "blues", size: int = PLOT_SIZE,
                  lettering: Lettering = READING, second: tuple[int | None, int | None] = (None, None),
                  kept_rows: tuple[int, ...] = (), reverse: bool = False, clip_at: float | None = None,
                  params: list = (), picks: list = (), heads_sent: int = 1, first_layer: int = 0,
                  key: alt.Legend | None = None,
                  tooltip: str = PICTURE_TOOLTIP, aria: bool = False, over: list = (),
                  subtitle: str | None = None, column: str | None = None, missing: str = MASKED_VALUE
                  ) -> alt.TopLevelMixin:
    """A heatmap on token axes: data, its cells (cells_by_head's lines) or, raster, its pictures (picture_row's, a
    row a head: pictures_by_head), coloured in scheme over ranges (a "value" per end, a head's two when several are
    sent; None: the data's own, which Vega finds), the head shown picked by picks (selections; params: those the
    chart carries, bound to inputs), heads_sent of a layer in the data, whose layers start at first_layer.

    title: the chart's heading and description (words, broken into lines), its TitleParams (an expression a
    selection changes) or a DataTitle, value_title the tooltip's name of a cell's value (the title, when words; a
    DataTitle's description); row_labels and
    column_labels, under row_title and column_title, no closer than the lettering allows, a sentence pair's B from
    second (first row, first column) in orange, kept_rows labelled whatever the step; size the plot's longer side
    (px); reverse, clip_at: colour_scale's; key the legend (by default under the plot, or beside it as the
    lettering says); tooltip a picture's; aria an ARIA description per cell; over: layers drawn over the cells
    (clipped cells' rings), subtitle a line under the title. column: the expression of a cell's value in cells_by_head's
    lines, for cells picked by a parameter of the chart's own (params) other than layer and head (None: the picked
    head's column, picked_column); missing: what a cell without a number (grey) says in its tooltip, masked by
    default."""
    rows, columns = len(row_labels), len(column_labels)
    value_title = value_title or (title.description if isinstance(title, DataTitle) else title)
    # Rows no closer than the lettering's labels may stand: a projected context (13 tokens × 32 dimensions) had rows
    # of 16 px under labels 17 px apart, and every other token lost its label.
    width, height = plot_size(rows, columns, size, max(MIN_ROW_PX, lettering.label_spacing_px))
    spacing = lettering.label_spacing_px
    x_axis = label_axis(list(column_labels), column_title, columns, angle=-60, length_px=width, spacing_px=spacing,
                        second_from=second[1])
    y_axis = label_axis(list(row_labels), row_title, rows, angle=0, length_px=height, spacing_px=spacing,
                        second_from=second[0], keep=kept_rows)
    colour = colour_scale(scheme, reverse, CLIP_END if clip_at is not None else None)
    key = key or legend(width, height, lettering.legend_beside)
    if raster:
        chart = labelled(raster_layers(data, ranges, rows, columns, centred(x_axis), centred(y_axis), colour,
                                       list(params), list(picks), key, tooltip), row_labels, column_labels)
    else:
        labels = (f"{labels_name(row_labels)}[datum.row]", f"{labels_name(column_labels)}[datum.column]")
        value, cell = column or picked_column(picks, heads_sent, first_layer), (width / columns, height / rows)
        layers = [labelled(vector_cells(data, labels, x_axis, y_axis, colour, value_title, list(params),
                                        value, cell, key, aria, missing=missing), row_labels, column_labels)]
        if ranges is not None:
            layers.append(range_carrier(ranges, colour, list(picks), key))
        if scheme == "redblue":  # a masked score's "×" and a negative one's bar, where cells hold them
            layers += cell_marks(data, value, cell, labels, cell_tooltip(y_axis.title, x_axis.title,
                                                                         value_title, missing=missing))
        chart = alt.layer(*layers) if len(layers) > 1 else layers[0]
    for layer in over:
        chart = alt.layer(chart, layer)
    if clip_at is not None:
        chart = chart.add_params(clip_end())
    return titled(chart, title, width, height, lettering, subtitle)


def titled(chart: alt.TopLevelMixin, title: str | alt.TitleParams | DataTitle, width: int, height: int,
           lettering: Lettering = READING, subtitle: str | None = None) -> alt.TopLevelMixin:
    """The chart at its plot's width and height under its title: words broken into lines no wider than the plot
    and its labels (and a subtitle under them), which also name the chart for screen readers (its description,
    aria-label, whatever it is drawn on); a DataTitle's lines, read from their parameter, under its description; or
    a TitleParams as it is."""
    if isinstance(title, DataTitle):
        # limit 0: no limit, as for a title of words. Streamlit cuts a title object's lines at its column's width less
        # 40 px unless the spec says otherwise, and the lines were already broken to the plot's width.
        heading = alt.TitleParams(text=alt.ExprRef(labels_name(title.lines)), limit=0)
        return labelled(chart, list(title.lines)).properties(title=heading, description=title.description,
                                                             width=width, height=height)
    if not isinstance(title, str):
        return chart.properties(title=title, width=width, height=height)
    lines = title_lines(title, width + lettering.label_room_px)
    heading = lines if subtitle is None else alt.TitleParams(
        text=lines, subtitle=title_lines(subtitle, SUBTITLE_WIDER * (width + lettering.label_room_px)))
    return chart.properties(title=heading, description=title, width=width, height=height)


# Many small maps in one view (the all-heads grid, the induction lab's heads): each head's picture placed by its row.


def placed_picture(matrix: np.ndarray, domain: list[float], x: int, y: int, side: int) -> dict:
    """A small map (many to a view: placed_pictures): matrix (R, K) as a picture side px across, in blues over
    domain, its blocks of cells each their largest value where it has more cells than px (pictures.pooled), and its
    place (x, x2, y, y2: px from the view's top left)."""
    return {"picture": picture_url(pooled(matrix, side), list(domain), drawn_scheme("blues"), side=side),
            "x": x, "x2": x + side, "y": y, "y2": y + side}


def pixel_scales(width: int, height: int) -> tuple[alt.Scale, alt.Scale]:
    """The x and y scales of a view of small maps placed in px, from its top left."""
    return (alt.Scale(domain=[0, width], nice=False, zero=False),
            alt.Scale(domain=[0, height], nice=False, zero=False, reverse=True))


def placed_pictures(base: alt.Chart, x: alt.Scale, y: alt.Scale, shown: str, tooltip: list, **mark) -> alt.Chart:
    """The small maps of base's rows (placed_picture's fields), on the scales pixel_scales gives, those that shown
    (an expression) keeps drawn at their size and the others 0 px wide: all stay drawn, and a move of the
    selection that picks them repaints without loading a picture again (a filter reloaded them on every move, and
    painted the view empty meanwhile). mark: the image mark's own properties (a cursor)."""
    return base.transform_calculate(right=f"{shown} ? datum.x2 : datum.x").mark_image(aspect=False, **mark).encode(
        x=alt.X("x:Q", axis=None, scale=x), x2="right", y=alt.Y("y:Q", axis=None, scale=y), y2="y2",
        url="picture:N", tooltip=tooltip)
