"""The neuron view's chart (as bertviz's): how one query token's row of attention is made, number by number,
for the head and the query token that the reader picks in the browser.

From the top, from the result to what it is made of: the row's numbers (q · k_j, scaled, and the softmax
weight, with a bar), the products q ⊙ k_j whose rows sum to q · k_j, the query vector q, and every key
vector k_j. Every number but the products is sent once: for every head and query token when they fit in
NEURON_CELLS, else for every query token of the current head, else for the current query alone. The head
and the query are point selections bound to range inputs above the chart (components/charts/scrub.py); the
browser multiplies q and k_j itself (h·T·T·d products would be far too many to send).

A query move keeps every mark: the picked query's q and row of numbers are two parameters, read from the
datasets by their place in them, and the marks (a line per key, dimension or number) stay, only their
values computed anew; filtering the picked line and unfolding it made every mark anew at each move. And
what a query move changes lies together above the keys, which it leaves alone: the canvas redraws the
rectangle around whatever changed, and keys lying between the changes were drawn again for nothing
(about 9 ms a move at 32 tokens).

A head wider than DRAWN_DIMENSIONS (the identity source's, as wide as the model: 384 on the bundled one) has its
dimensions drawn a window at a time, picked with a third input in the browser: 384 columns left each cell about a
pixel wide, too narrow to point at, and twelve times the cells of a trained head took Vega a second to build.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import altair as alt
import numpy as np
import pyarrow as pa

from attention.analyses.neuron import NeuronHeads
from attention.stages.dot_product import MASKED_SCORE
from components.charts.colours import vega_scheme
from components.charts.draw import data_value, naming_layer
from components.charts.heatmap import HEAD, cell_tooltip, filter_on, picked, tooltip_of
from components.charts.label_room import fitted_size
from components.charts.lettering import Lettering
from components.charts.palettes import drawn_scheme
from components.charts.plot_sizes import plot_size
from components.charts.scrub import LEGEND, picker
from components.charts.token_axes import TOKEN_BANDS, label_axis, labelled, labels_name

# What is sent at once, in numbers: every head and query when they fit (a 32-token text on the bundled
# model: 61,440, about 0.25 MB), else the current head's every query, else the current query alone.
NEURON_CELLS = 2**18
QUERY = "query"  # the query token's selection, and the field it picks
QUERIES, KEYS, ROWS = "neuron-queries", "neuron-keys", "neuron-rows"  # the datasets
Q_PICKED, ROW_PICKED = "neuron_q", "neuron_row"  # parameters: the picked query's line of q and of numbers
BOUND = "neuron_bound"  # a parameter: the largest |value| among the picked head's q and k_j, its colours' end
NUMBERS = ("dot", "scaled", "weight")  # the row's numbers, left to right
PRODUCT_BOUND = "product_bound"  # a line of numbers' largest |q_i · k_j,i|: the products' colours end there
ROW_PX = 16  # a line of numbers, at NUMBER_FONT_PX
NUMBER_FONT_PX = 12
NUMBER_PX = (58, 78)  # a column of numbers at NUMBER_FONT_PX: in a narrow column (a phone), else
BAR_PX = (60, 120)
NARROW_PX = 480  # a column narrower than this gets the narrow numbers and bars
QUERY_PX = 24  # q is one row, a strip above K
DIMENSIONS = "dimension of the head"
HIDDEN_KEY = "masked: this query may not look at this key"
DRAWN_DIMENSIONS = 64  # at most this many of a head's dimensions drawn at once: a window, moved in the browser
FIRST_DIMENSION = "first_dimension"  # a parameter: the window's first dimension, bound to an input
# Whether the picked query may look at a line's key: its scaled score is a number, not NaN (neuron_frames).
_SEEN = f"({ROW_PICKED} && isValid({ROW_PICKED}['m' + datum.key]))"


def send_plan(num_heads: int, tokens: int, head_size: int, head: int, query: int
              ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The heads and query tokens to send, within NEURON_CELLS: per head its keys (T·d), and per query
    its q (d) and its three rows of numbers (3·T)."""
    every_query = tuple(range(tokens))
    for heads in (tuple(range(num_heads)), (head,)):
        if len(heads) * (tokens * head_size + tokens * (head_size + 3 * tokens)) <= NEURON_CELLS:
            return heads, every_query
    return (head,), (query,)


def neuron_frames(numbers: NeuronHeads, heads: tuple[int, ...], queries: tuple[int, ...]) -> dict[str, pa.Table]:
    """The three datasets of the given heads' and queries' numbers: a line per query sent (its q), per key (its
    k_j) and per query (its numbers: columns s0…, m0… and w0… for q · k_j, the scaled score and the weight of
    every key j). The lines of queries and numbers are in (head, query) order, which the chart reads them by
    (_picked_line). Each key's line holds its head's bound too: the largest |value| among the head's q and k_j
    sent; each line of numbers the largest |q_i · k_j,i| of its query (product_bounds), where the products'
    colours end.

    Arrow tables built from the arrays column by column: a 472-token text's numbers are 1,416 columns,
    which pandas' way to Arrow takes 100 ms for, at every query move."""
    tokens = numbers.keys.shape[1]
    heads, queries = np.asarray(heads), np.asarray(queries)
    head_index, query_index = (index.ravel() for index in np.indices((len(heads), len(queries))))
    per_query = {HEAD: heads[head_index].astype(np.uint16), QUERY: queries[query_index].astype(np.uint16)}
    head_of_key, key_index = (index.ravel() for index in np.indices((len(heads), tokens)))
    bounds = np.maximum(np.abs(numbers.keys).max(axis=(1, 2)), np.abs(numbers.queries[:, queries]).max(axis=(1, 2)))
    per_key = {HEAD: heads[head_of_key].astype(np.uint16), "key": key_index.astype(np.uint16),
               "bound": bounds[head_of_key].astype(np.float32)}

    def columns(values: np.ndarray, prefix: str = "") -> dict[str, np.ndarray]:  # (…, n) -> one column per j
        lines = values.reshape(-1, values.shape[-1]).astype(np.float32)
        return {f"{prefix}{j}": lines[:, j] for j in range(lines.shape[1])}

    # A key the mask hides from a query (after it, under a causal mask) has no numbers in its row: NaN, not shown,
    # as bertviz's neuron view leaves GPT-2's later keys out.
    hidden = numbers.scaled[:, queries] <= MASKED_SCORE  # (h, Q, T)

    def shown(values: np.ndarray) -> np.ndarray:
        return np.where(hidden, np.float32("nan"), values[:, queries])  # (h, Q, T)

    return {
        QUERIES: pa.table({**per_query, **columns(numbers.queries[:, queries])}),  # (h·Q, 2 + d)
        KEYS: pa.table({**per_key, **columns(numbers.keys)}),  # (h·T, 3 + d)
        ROWS: pa.table({**per_query, PRODUCT_BOUND: product_bounds(numbers.queries[:, queries], numbers.keys).ravel(),
                        **columns(shown(numbers.dots), "s"), **columns(shown(numbers.scaled), "m"),
                        **columns(shown(numbers.weights), "w")}),
    }


def product_bounds(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """queries (h, Q, d), keys (h, T, d) -> (h, Q): the largest |q_i · k_j,i| over every key j and dimension i of
    each query, without making the h·Q·T·d products: the largest |k_j,i| over j, times |q_i|, at its largest i."""
    largest_key = np.abs(keys).max(axis=1)  # (h, d)
    return (np.abs(queries) * largest_key[:, None, :]).max(axis=-1).astype(np.float32)  # (h, Q)


def spec(labels: tuple[str, ...], head_size: int, shape: tuple[int, int], many_heads: bool, many_queries: bool,
          dot_title: str, scaled_title: str, width: int, lettering: Lettering) -> dict:
    """The chart without its data: the head and query inputs, the numbers, q ⊙ K, q and K."""
    head, query = picker(HEAD, "Head", shape[0]), picker(QUERY, "Query token", shape[1])
    # With one query sent, the data hold only it: its input asks for a rerun, and the chart keeps what it has.
    query_at = picked(QUERY) if many_queries else f"({Q_PICKED} ? {Q_PICKED}.{QUERY} : 0)"
    head_filter = [filter_on(head)] if many_heads else []
    line = _picked_line(many_heads, many_queries, shape[1])
    head_line = f"{picked(HEAD)} * {shape[1]}" if many_heads else "0"  # the picked head's first key
    rows_picked = [alt.param(name=Q_PICKED, expr=f"data('{QUERIES}')[{line}]"),
              alt.param(name=ROW_PICKED, expr=f"data('{ROWS}')[{line}]"),
              alt.param(name=BOUND, expr=data_value(KEYS, head_line, "bound", 1))]
    # Vega lists the inputs of a chart's parameters last first: query is added first so that Head leads.
    narrow = width < NARROW_PX
    # The numbers grow with the lettering where there is room: a phone's column has none for wider columns.
    number_font = NUMBER_FONT_PX if narrow else max(NUMBER_FONT_PX, lettering.smallest_text_px)
    growth = number_font / NUMBER_FONT_PX  # the numbers' lines and columns grow with their text
    # Every token's label, "3: like": the parameter the axes read (token_labels'), which the expressions read too.
    named = labels_name(list(labels))
    numbers = _numbers(labels, named, query_at, dot_title, scaled_title, [query, head],
                       round(NUMBER_PX[not narrow] * growth),
                       BAR_PX[not narrow], number_font, round(ROW_PX * growth), lettering.label_spacing_px)
    size = fitted_size(width, lettering=lettering)
    spacing = lettering.label_spacing_px
    window = Window.of(head_size)
    vectors = alt.vconcat(_query_vector(labels, named, window, query_at, size),
                          _key_vectors(labels, named, window, head_filter, size, spacing),
                          spacing=6).resolve_scale(color="shared")  # q and k_j in the same colours
    products = _products(labels, named, window, head_filter, _products_title(window, dot_title), size, spacing)
    chart = alt.vconcat(numbers, products, vectors, spacing=28)
    return chart.add_params(*rows_picked, *window.params).resolve_scale(
        color="independent").properties(autosize=alt.AutoSizeParams(type="pad"),
                                        usermeta={"embedOptions": {"renderer": "canvas"}}).to_dict(validate=False)


def windowed(head_size: int) -> bool:
    """Whether a head this wide is drawn a window of DRAWN_DIMENSIONS at a time."""
    return head_size > DRAWN_DIMENSIONS


@dataclass(frozen=True)
class Window:
    """The head's dimensions drawn: `drawn` of them from the first, an expression (the input's value, or 0 when
    every dimension is drawn); `params`: the input, if there is one."""

    head_size: int
    drawn: int
    first: str
    params: tuple[alt.Parameter, ...]

    @classmethod
    def of(cls, head_size: int) -> Window:
        if not windowed(head_size):
            return cls(head_size, head_size, "0", ())
        last_first = (head_size - 1) // DRAWN_DIMENSIONS * DRAWN_DIMENSIONS  # the last window may hold fewer
        window = alt.param(name=FIRST_DIMENSION, value=0, bind=alt.binding_range(
            min=0, max=last_first, step=DRAWN_DIMENSIONS, name="Dimensions from"))
        return cls(head_size, DRAWN_DIMENSIONS, FIRST_DIMENSION, (window,))

    @property
    def whole(self) -> bool:
        return self.drawn == self.head_size

    @property
    def x(self) -> str:
        """The field that places a cell in its column: the dimension itself when every one is drawn."""
        return "dimension" if self.whole else "column"

    @property
    def label(self) -> str:
        """A column's label on the axis: the dimension drawn there, none past the head's last."""
        dimension = f"{self.first} + toNumber(datum.value)"
        return f"{dimension} < {self.head_size} ? '' + ({dimension}) : ''"

    def folded(self, chart: alt.Chart, as_value: str) -> alt.Chart:
        """chart's lines, a line per (line, dimension drawn), with its `dimension` (as the datasets name it) and
        as_value, that dimension's number of the line; and in a window, its `column` (0 to drawn - 1)."""
        if self.whole:
            return chart.transform_fold([str(i) for i in range(self.drawn)], as_=["dimension", as_value])
        columns = chart.transform_fold([str(i) for i in range(self.drawn)], as_=["column", as_value])
        return self.placed(columns).transform_calculate(**{as_value: "datum[datum.dimension]"})  # the window's

    def placed(self, chart: alt.Chart) -> alt.Chart:
        """chart's lines, each with a `column`, given the head's `dimension` there; in a last window that holds
        fewer, the columns past the head's last dimension left out."""
        if self.whole:
            return chart.transform_calculate(dimension="datum.column")
        chart = chart.transform_calculate(dimension=f"'' + ({self.first} + toNumber(datum.column))")
        return chart.transform_filter(f"toNumber(datum.dimension) < {self.head_size}")


def _products_title(window: Window, dot_title: str) -> str | alt.TitleParams:
    """What q ⊙ k_j's rows sum to; in a window, which dimensions are drawn (the sum is over all of them, as the
    view's caption says): "q ⊙ k_j, dimensions 64–127 of 384"."""
    if window.whole:
        return f"q ⊙ k_j: each row sums to {dot_title}"
    last = f"min({window.first} + {window.drawn - 1}, {window.head_size - 1})"
    return alt.TitleParams(text=alt.ExprRef(
        expr=f"'q ⊙ k_j, dimensions ' + {window.first} + '–' + {last} + ' of {window.head_size}'"))


def _picked_line(many_heads: bool, many_queries: bool, tokens: int) -> str:
    """The place of the picked (head, query) among the lines of queries and of numbers (_frames' order)."""
    head = f"{picked(HEAD)} * {tokens if many_queries else 1}" if many_heads else "0"
    query = picked(QUERY) if many_queries else "0"
    return f"{head} + {query}"


def _filtered(data: str, filters: list[str]) -> alt.Chart:
    chart = alt.Chart(alt.NamedData(name=data))
    for condition in filters:
        chart = chart.transform_filter(condition)
    return chart


def _numbers(labels, named: str, query_at, dot_title, scaled_title, params: list, number_px: int, bar_px: int,
             font_px: float, row_px: int, spacing_px: int) -> alt.HConcatChart:
    """The picked query's row of numbers (font_px, a line of row_px per key token; its labels no closer than
    spacing_px), and its weights as bars."""
    tokens = len(labels)
    prefixes = dict(zip(NUMBERS, "smw", strict=True))
    table = alt.Chart(alt.sequence(0, tokens, as_="key")).transform_fold(list(NUMBERS), as_=["number", "value"])
    table = table.transform_calculate(
        column=f"{json.dumps(prefixes)}[datum.number] + datum.key", key_label=f"{named}[datum.key]",
    ).transform_calculate(value=f"{ROW_PICKED} ? {ROW_PICKED}[datum.column] : null").transform_calculate(
        shown="isValid(datum.value) ? format(datum.value, '.4f') : ''")
    titles = dict(zip(NUMBERS, (dot_title, scaled_title, "softmax weight"), strict=True))
    height = row_px * tokens
    key_axis = label_axis(list(labels), "key token", tokens, angle=0, length_px=height, spacing_px=spacing_px)
    rows = alt.Y("key:O", axis=key_axis, scale=alt.Scale(paddingInner=0.1))
    table = table.mark_text(fontSize=font_px, aria=False).encode(
        x=alt.X("number:N", sort=list(NUMBERS), title=None,
                axis=alt.Axis(orient="top", labelAngle=0, labelExpr=f"{json.dumps(titles)}[datum.value]",
                              labelFontSize=font_px, ticks=False, domain=False)),
        y=rows,
        text=alt.Text("shown:N"),
        tooltip=tooltip_of({"key token": "datum.key_label", "number": "datum.number",
                            "value": f"isValid(datum.value) ? format(datum.value, '.9g') : '{HIDDEN_KEY}'"}),
    ).add_params(*params).properties(width=number_px * len(NUMBERS), height=height)
    table = labelled(table, list(labels))
    bars = alt.Chart(alt.sequence(0, tokens, as_="key")).transform_calculate(
        key_label=f"{named}[datum.key]", column="'w' + datum.key",
    ).transform_calculate(weight=f"{ROW_PICKED} ? {ROW_PICKED}[datum.column] : null").mark_bar(
        color="#4c78a8", aria=False).encode(
        x=alt.X("weight:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(orient="top", title="weight", tickCount=2)),
        y=alt.Y("key:O", axis=None, scale=alt.Scale(paddingInner=0.1)),
        tooltip=tooltip_of({"key token": "datum.key_label", "weight": "format(datum.weight, '.9g')"}),
    ).properties(width=bar_px, height=height)
    bars = alt.layer(bars, naming_layer(ROWS))
    title = alt.TitleParams(text=alt.ExprRef(expr=f"'The row of query ' + {named}[{query_at}]"), anchor="start")
    return alt.hconcat(table, bars, spacing=8, title=title).resolve_scale(y="shared")


def _vector_cells(chart: alt.Chart, window: Window, rows: int, row_field: str, axis: alt.Axis,
                  title: str | alt.TitleParams,
                  size: tuple[int, int], colour: alt.Scale, value_title: str = "value",
                  dimension_axis: bool = True) -> alt.Chart:
    """A heatmap of vectors, `rows` of them, its columns the window's dimensions (without their axis when not
    dimension_axis: q sits right above K, on the same columns); chart's lines have a `column` (Window.placed), a
    `dimension` and a `value` each.

    Streamlit's Vega evaluates expressions with an interpreter, so what can be worked out per line (its
    label) is, before the fold makes a cell of each dimension drawn; the cells are placed by their column, with a
    fixed size, a tooltip of one expression and no ARIA text each (as components/charts/scrub.py's cells), and no
    cell is checked for a missing value (invalid=None: a product whose q has not arrived has no colour). The axis
    names each column's dimension, whichever window is drawn."""
    x_axis = alt.Axis(title=DIMENSIONS, labelAngle=0, values=[str(i) for i in _ticks(window.drawn)],
                      **({} if window.whole else {"labelExpr": window.label}))
    return chart.mark_rect(invalid=None, aria=False, width=size[0] / window.drawn, height=size[1] / rows).encode(
        x=alt.X(f"{window.x}:O", scale=alt.Scale(domain=[str(i) for i in range(window.drawn)]),
                axis=x_axis if dimension_axis else None),
        y=alt.Y(f"{row_field}:O", axis=axis, scale=TOKEN_BANDS),
        color=alt.Color("value:Q", scale=colour, title=None, legend=LEGEND),
        tooltip=cell_tooltip(axis.title, DIMENSIONS, value_title, column="datum.dimension"),
    ).properties(title=title, width=size[0], height=size[1])


def _folded_keys(named: str, window: Window, filters: list[str], as_value: str) -> alt.Chart:
    """The keys of the picked head, a line per (key, dimension drawn), labelled: made anew on a head move only
    (and on a move of the window)."""
    return window.folded(_filtered(KEYS, filters).transform_calculate(row_label=f"{named}[datum.key]"), as_value)


def _query_vector(labels, named: str, window: Window, query_at, size: int) -> alt.Chart:
    """q of the picked query: a line per dimension drawn, which stays, and its value read from the picked line."""
    width, _ = plot_size(len(labels), window.drawn, size)
    axis = alt.Axis(title="query", labelExpr=f"{named}[datum.value]", labelLimit=90)
    columns = alt.Chart(alt.sequence(0, window.drawn, as_="index")).transform_calculate(column="'' + datum.index")
    chart = window.placed(columns).transform_calculate(
        **{QUERY: query_at, "row_label": f"{named}[{query_at}]",
           "value": f"{Q_PICKED} ? {Q_PICKED}[datum.dimension] : null"})
    cells = _vector_cells(chart, window, 1, QUERY, axis, "query vector q", (width, QUERY_PX), _head_colours(),
                          dimension_axis=False)
    return alt.layer(cells, naming_layer(QUERIES))


def _key_vectors(labels, named: str, window: Window, filters, size: int, spacing_px: int) -> alt.Chart:
    cells = plot_size(len(labels), window.drawn, size)
    axis = label_axis(list(labels), "key token", len(labels), angle=0, length_px=cells[1], spacing_px=spacing_px)
    return labelled(_vector_cells(_folded_keys(named, window, filters, "value"), window, len(labels), "key", axis,
                                  "key vectors k_j", cells, _head_colours()), list(labels))


def _head_colours() -> alt.Scale:
    """q's and k_j's colours: from -BOUND to BOUND, the same for every query token of the head. Read from the
    data drawn, they changed with q at each query move, and every key was coloured and drawn again."""
    return alt.Scale(**vega_scheme(drawn_scheme("redblue")), domain=alt.ExprRef(expr=f"[-{BOUND}, {BOUND}]"))


def _products(labels, named: str, window: Window, filters, title: str | alt.TitleParams, size: int,
              spacing_px: int) -> alt.Chart:
    """q ⊙ k_j: each key's line, multiplied dimension by dimension with the picked query's q."""
    tokens = len(labels)
    # Before the data of a query sent alone arrive, there is no q: nothing is drawn, nothing throws.
    chart = _folded_keys(named, window, filters, "k").transform_calculate(
        value=f"{Q_PICKED} && {_SEEN} ? datum.k * {Q_PICKED}[datum.dimension] : null")
    cells = plot_size(tokens, window.drawn, size)
    axis = label_axis(list(labels), "key token", tokens, angle=0, length_px=cells[1], spacing_px=spacing_px)
    return labelled(_vector_cells(chart, window, tokens, "key", axis, title, cells, _product_colours(),
                                  value_title="q_i · k_j,i"), list(labels))


def _product_colours() -> alt.Scale:
    """q ⊙ k_j's colours: symmetric around 0, out to the picked query's largest |product| (a number of its line
    of numbers), so that a product of −11 is as pale as one of +11 whatever the largest positive one."""
    bound = f"({ROW_PICKED} && {ROW_PICKED}.{PRODUCT_BOUND} || 1)"
    return alt.Scale(**vega_scheme(drawn_scheme("redblue")), domain=alt.ExprRef(expr=f"[-{bound}, {bound}]"))


def _ticks(count: int) -> list[int]:
    """About eight ticks along the head's dimensions."""
    return list(range(0, count, max(1, count // 8)))
