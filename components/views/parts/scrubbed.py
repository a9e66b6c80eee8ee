"""Charts whose layer and head (or head and query) are picked in the browser, drawn on the page: their specs and
datasets built once (chart_memos.chart_spec, chart_memos.chart_data), where their inputs start (the anchor, kept in the
session), and what a move on them reports. The charts themselves are built in components/charts/ from numbers;
here a stack of heads (stacks.HeadStack) becomes those numbers, only when no kept dataset answers.

The spec holds where the inputs start: the anchor. It stays as it was while the chart itself is what
moves, so that those reruns leave the spec alone; it moves to the page's layer and head when the
chart is drawn anew or something else moved them (a link, a click in the all-heads grid).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from components.assets import filled, read_beside, style_tag
from components.caches import chart_memos, stacks
from components.charts import lines, neuron_chart, scrub
from components.charts.chart_text import describe_head, describe_query
from components.charts.draw import draw_spec
from components.charts.heatmap import HEAD, LAYER, MAX_VECTOR_CELLS, panel_title_lines
from components.charts.label_stand_ins import stand_ins, with_labels
from components.charts.lettering import READING, Lettering
from components.charts.lines import TOKENS, window
from components.charts.masked import unmasked
from components.charts.neuron_chart import QUERY
from components.charts.plot_sizes import MIN_ROW_PX, PLOT_SIZE, plot_size
from components.charts.scrub import INPUT_STYLE, ZOOM, cells_under, placed
from components.charts.token_axes import kept_where_skipped
from components.views.parts.number_table import number_table, tables_on_request

_HELD = "_scrub_anchors"  # in the session: {chart key: (identity, anchor, shown, run)}
_TOOLBAR_INSIDE = read_beside(__file__, "toolbar_inside.css")  # toolbar_inside's style, for one chart's selector


@dataclass(frozen=True)
class Panel:
    """One heatmap of a scrubbed chart: its numbers (all the heads sent) and how to draw them."""

    stack: stacks.HeadStack | stacks.AlignedDifference
    row_labels: tuple[str, ...]
    column_labels: tuple[str, ...]
    title: str
    scheme: str = "blues"
    row_title: str = "query token"
    column_title: str = "key token"
    size: int = PLOT_SIZE  # px, the longer side of the plot
    weight_scale: str = "head"  # how far each head's colours reach: colour_ranges.head_domains
    second_sentence: tuple[int | None, int | None] = (None, None)  # B's first row and column: token_axes.label_axis
    lettering: Lettering = READING  # how large its text is, and how close its labels may stand
    zoomable: bool = False  # as a picture, a rectangle dragged across it is reported (zoom_window)
    kept_rows: tuple[int, ...] = ()  # rows labelled whatever the step between labels (the query picked)
    # What the chart is, in words no control changes (its description and its values' name in the tooltips): the
    # title itself by default. The title is data (heatmap.DataTitle): a control that changes only it keeps the spec.
    about: str = ""

    @property
    def raster(self) -> bool:
        return len(self.row_labels) * len(self.column_labels) > MAX_VECTOR_CELLS

    def drawing(self, name: str, standing: dict[tuple[str, ...], tuple[str, ...]]) -> tuple:
        """What the spec depends on (not the numbers, nor the labels: standing's stand-ins for them), hashable,
        with the name its datasets carry."""
        return (name, standing[self.title_lines()], self.about or self.title, standing[self.row_labels],
                standing[self.column_labels], self.scheme,
                self.row_title, self.column_title, self.size, self.raster, self.second_sentence, self.lettering,
                self.zoomable and self.raster, self.kept_rows_drawn())

    def label_lists(self) -> tuple[tuple[str, ...], ...]:
        """What the spec is built on stand-ins of (label_stand_ins): the rows', the columns' and the title's lines."""
        return self.row_labels, self.column_labels, self.title_lines()

    def title_lines(self) -> tuple[str, ...]:
        """The title broken into lines as its plot's width allows."""
        return panel_title_lines(self.title, len(self.row_labels), len(self.column_labels), self.size, self.lettering)

    def kept_rows_drawn(self) -> tuple[int, ...]:
        """kept_rows where the row axis skips labels, else none: a short text's rows are all labelled, and a new
        text whose query picked another word (kept_rows) then keeps the spec of the one before."""
        rows, columns = len(self.row_labels), len(self.column_labels)
        spacing = self.lettering.label_spacing_px
        height = plot_size(rows, columns, self.size, max(MIN_ROW_PX, spacing))[1]
        return kept_where_skipped(self.kept_rows, rows, height, spacing)


@dataclass(frozen=True)
class Strip:
    """Bars under a scrubbed heatmap, one a column label, picked by its inputs: build(*arguments) gives their
    dataset, scrub.strip_frame's of every head the heatmap sends, by the name scrub.STRIP (kept:
    chart_memos.chart_data)."""

    title: str  # the layer and head picked follow it
    labels: tuple[str, ...]
    build: Callable[..., dict[str, pd.DataFrame]]
    arguments: tuple


def scrub_heatmap(stack: stacks.HeadStack, row_labels: list[str], column_labels: list[str], *, title: str, key: str,
                  position: tuple[int, int], shape: tuple[int, int], on_move: Callable[[int, int], None],
                  scheme: str = "blues", row_title: str = "query token", column_title: str = "key token",
                  size: int = PLOT_SIZE, weight_scale: str = "head",
                  second_sentence: tuple[int | None, int | None] = (None, None), lettering: Lettering = READING,
                  zoomable: bool = False, strip: Strip | None = None, kept_rows: tuple[int, ...] = (),
                  about: str = "") -> None:
    """Draw a stacks.HeadStack as one heatmap whose layer and head the reader picks in the browser.

    position is the (layer, head) the page stands at, shape the (layers, heads) there are to pick from.
    on_move(layer, head) is called, before the rerun, when the reader has moved the chart's inputs. size is the
    longer side of the plot, in px; weight_scale, second_sentence, lettering, zoomable and kept_rows as Panel's.
    strip: bars under the plot, as wide, picked in the browser too. about: what the chart is, in words no control
    changes (Panel's).
    """
    panel = Panel(stack, tuple(row_labels), tuple(column_labels), title, scheme, row_title, column_title, size,
                  weight_scale, second_sentence, lettering, zoomable, kept_rows, about)
    scrub_panels([panel], key=key, position=position, shape=shape, on_move=on_move, strip=strip)


def scrub_panels(panels: list[Panel], *, key: str, position: tuple[int, int], shape: tuple[int, int],
                 on_move: Callable[[int, int], None], shared_colour: bool = False, side_by_side: bool = True,
                 strip: Strip | None = None) -> None:
    """Draw heatmaps side by side (the first two, when side_by_side; else each under the one before) in one
    chart whose one pair of layer and head inputs picks the head of all of them, in the browser.
    shared_colour: the first two share one colour scale. strip: bars under them, as wide as the first's plot."""
    stacks = tuple(panel.stack for panel in panels)
    names = [f"p{index}" for index in range(len(panels))]
    standing = stand_ins(*(labels for panel in panels for labels in panel.label_lists()),
                         *([] if strip is None else [strip.labels]))
    drawings = tuple(panel.drawing(name, standing) for panel, name in zip(panels, names, strict=True))
    first = panels[0]
    strip_drawing = None if strip is None else (
        strip.title, standing[strip.labels], plot_size(len(first.row_labels), len(first.column_labels), first.size)[0],
        first.lettering)
    sent = stacks[0].layers  # every layer, a window of them, or the page's alone
    layout = (drawings, shape, sent[0] if len(sent) > 1 else None, len(stacks[0].heads) > 1, shared_colour,
              side_by_side, strip_drawing)
    anchor = anchor_for(key, (stacks, layout), position)
    spec, frames = with_labels(placed(chart_memos.chart_spec(scrub.spec, *layout), {LAYER: anchor[0], HEAD: anchor[1]}),
                               standing)
    for panel, name in zip(panels, names, strict=True):
        frames |= chart_memos.chart_data(_panel_frames, panel.stack, panel.scheme, panel.raster, name,
                                         panel.weight_scale, shape[1])
    if strip is not None:
        frames |= chart_memos.chart_data(strip.build, *strip.arguments)
    st.html(INPUT_STYLE)
    zoom = [ZOOM] if panels[0].zoomable and panels[0].raster else []
    draw_spec(spec, frames, key=key, lettering=panels[0].lettering, on_select=lambda: report_move(key, on_move),
              selection_mode=[LAYER, HEAD, *zoom])
    chart_text(panels, position)
    panel_tables(panels, key, position)


def chart_text(panels: list[Panel], position: tuple[int, int]) -> None:
    """What the chart shows at the page's layer and head, as text a screen reader reads and the page does not draw
    (charts/chart_text.py): one paragraph a panel, read again when a move reruns the page (aria-live)."""
    layer, head = position
    said([describe_head(panel.title, layer, head, matrix, list(panel.row_labels), list(panel.column_labels))
          for panel, matrix in _shown_heads(panels, position)])


def panel_tables(panels: list[Panel], key: str, position: tuple[int, int]) -> None:
    """Under chart key, a toggle; when on, each panel's numbers at the page's layer and head as a table
    (number_table), drawn anew with the head a move of the chart's inputs reruns the page at."""
    layer, head = position

    def tables() -> None:
        for panel, matrix in _shown_heads(panels, position):
            number_table(matrix, list(panel.row_labels), list(panel.column_labels),
                         caption=f"{panel.title}, layer {layer}, head {head}", row_title=panel.row_title,
                         column_title=panel.column_title)

    tables_on_request(key, tables)


def _shown_heads(panels: list[Panel], position: tuple[int, int]) -> list[tuple[Panel, np.ndarray]]:
    """Each panel that holds the (layer, head) at position, with that head's numbers (R, K)."""
    layer, head = position
    return [(panel, panel.stack.values()[panel.stack.layers.index(layer), panel.stack.heads.index(head)])
            for panel in panels if layer in panel.stack.layers and head in panel.stack.heads]


def said(texts: list[str]) -> None:
    """Text alternatives of a chart, a paragraph each, read by a screen reader and not drawn (page/page_head.css);
    read again when a rerun changes them (aria-live)."""
    if texts:
        st.html("".join(f'<p class="aa-chart-text" aria-live="polite">{html.escape(text)}</p>' for text in texts))


def zoom_window(key: str, rows: int, columns: int) -> tuple[range, range] | None:
    """The rows and columns of the rectangle last dragged across chart key's picture, ZOOM_MOST of each at most
    (around its middle); None when there is none."""
    dragged = st.session_state.get(key, {}).get("selection", {}).get(ZOOM)
    if not dragged or "x" not in dragged or "y" not in dragged:
        return None
    return cells_under(dragged["y"], rows), cells_under(dragged["x"], columns)


def anchor_for(key: str, identity: tuple, position: tuple[int, ...]) -> tuple[int, ...]:
    """Where the chart's inputs start: as before while the chart drawn in the last run is what moved,
    else position (the chart is new, shows other numbers, or something else moved the page).

    identity holds what the chart shows and everything its spec is built from: a spec that changes (another
    window size, presentation mode) is drawn anew by the browser, from where the spec says its inputs start."""
    held = st.session_state.setdefault(_HELD, {})
    run = chart_memos.view_run()  # a chart drawn in the run just before still stands in the browser
    last = held.get(key)
    # Drawn in this run already: by the run of the view, rerun since by a fragment of it that holds the chart
    fresh = last is None or last[0] != identity or last[2] != position or last[3] not in (run - 1, run)
    anchor = position if fresh else last[1]
    held[key] = (identity, anchor, position, run)
    return anchor


def report_move(key: str, on_move: Callable[..., None], names: tuple[str, ...] = (LAYER, HEAD),
                cast: Callable[[float], float] = int) -> None:
    """The chart's selection callback: hand what it shows now (layer and head, or the selections named, each
    through cast) to on_move, and remember it."""
    held = st.session_state.get(_HELD, {}).get(key)
    if held is None:  # not drawn in this session yet: the page's own layer and head stand
        return
    selection = st.session_state[key]["selection"]
    identity, anchor, shown, run = held
    picked = [cast(selection[name][0][name]) if selection.get(name) else at
              for name, at in zip(names, shown, strict=True)]
    st.session_state[_HELD][key] = (identity, anchor, tuple(picked), run)
    on_move(*picked)


def scrub_lines(stack: stacks.HeadStack, query_tokens: list[str], key_tokens: list[str], *, key: str,
                position: tuple[int, int], shape: tuple[int, int], on_move: Callable[[int, int], None],
                title: str, width: int, lettering: Lettering = READING, start: int = 0) -> None:
    """Draw a weights stacks.HeadStack as lines whose layer and head the reader picks in the browser: the query
    tokens on the left, the key tokens on the right (the same, unless a sentence pair's block is chosen), in a
    column width px wide. Tokens are written no smaller than lettering's font, however long the text.
    start: the first of the LINES_MOST queries and keys shown (window), on a longer text."""
    queries, keys = window(len(query_tokens), start), window(len(key_tokens), start)
    query_tokens, key_tokens = query_tokens[queries.start:queries.stop], key_tokens[keys.start:keys.stop]
    rows = max(len(query_tokens), len(key_tokens))
    between = max(80, min(lines.WIDTH, width - 2 * lines.TOKEN_PX))
    layout = (title, rows, shape, len(stack.layers) > 1, len(stack.heads) > 1, between, lettering.smallest_text_px)
    anchor = anchor_for(key, (stack, layout), position)
    spec = placed(chart_memos.chart_spec(lines.spec, *layout), {LAYER: anchor[0], HEAD: anchor[1]})
    tokens = pd.DataFrame({"side": ["q"] * len(query_tokens) + ["k"] * len(key_tokens),
                           "position": [*range(len(query_tokens)), *range(len(key_tokens))],
                           "token": [*query_tokens, *key_tokens]})
    frames = {**chart_memos.chart_data(_lines_frames, stack, queries.start, queries.stop, keys.start, keys.stop),
              TOKENS: tokens}
    st.html(INPUT_STYLE)
    draw_spec(spec, frames, key=key, lettering=lettering, on_select=lambda: report_move(key, on_move),
              selection_mode=[LAYER, HEAD])
    layer, head = position
    if layer in stack.layers and head in stack.heads:  # the lines drawn: the window's queries and keys
        matrix = stack.values()[stack.layers.index(layer), stack.heads.index(head)][queries.start:queries.stop,
                                                                                   keys.start:keys.stop]  # (R, K)
        said([describe_head(title, layer, head, matrix, query_tokens, key_tokens)])
        tables_on_request(key, lambda: number_table(matrix, query_tokens, key_tokens,
                                                    caption=f"{title}, layer {layer}, head {head}"))


def scrub_neuron(stack: stacks.NeuronStack, labels: list[str], head_size: int, *, dot_title: str, scaled_title: str,
                 key: str, position: tuple[int, int], shape: tuple[int, int],
                 on_move: Callable[[int, int], None], width: int, lettering: Lettering = READING) -> None:
    """Draw the neuron view of the stack, its head and query picked in the browser.

    labels: every token's label; position: the (head, query) the page stands at; shape: (heads, tokens)
    there are to pick from; width: the px of the column it is drawn in; lettering: how large its text is.
    on_move(head, query) is called, before the rerun, when the reader moved them.
    """
    labels = tuple(labels)
    standing = stand_ins(labels)
    layout = (standing[labels], head_size, shape, len(stack.heads) > 1, len(stack.queries) > 1, dot_title,
              scaled_title, width, lettering)
    anchor = anchor_for(key, (stack, layout), position)
    spec, labels_data = with_labels(placed(chart_memos.chart_spec(neuron_chart.spec, *layout),
                                           {HEAD: anchor[0], QUERY: anchor[1]}), standing)
    frames = {**chart_memos.chart_data(_neuron_frames, stack), **labels_data}
    st.html(INPUT_STYLE)
    draw_spec(spec, frames, key=key, lettering=lettering, on_select=lambda: report_move(key, on_move, (HEAD, QUERY)),
              selection_mode=[HEAD, QUERY])
    head, query = position
    if head in stack.heads and 0 <= query < len(labels):
        numbers = stack.values()
        at = stack.heads.index(head)
        weights = numbers.weights[at, query]  # (T,)
        said([describe_query(stack.settings.layer, head, labels[query], weights, list(labels))])

        def table() -> None:  # a key the mask hides has no numbers, as on the chart: every one of its row masked
            hidden = ~unmasked(numbers.scaled[at, query])  # (T,)
            numbers_row = np.stack([numbers.dots[at, query], numbers.scaled[at, query], weights], axis=1)  # (T, 3)
            number_table(np.where(hidden[:, None], np.nan, numbers_row), list(labels),
                         [dot_title, scaled_title, "weight"], caption=f"Query {labels[query]!r}, layer "
                         f"{stack.settings.layer}, head {head}: its numbers with each key", row_title="key token",
                         column_title="number")

        tables_on_request(key, table)


def _panel_frames(stack: stacks.HeadStack | stacks.AlignedDifference, scheme: str, raster: bool, name: str,
                  weight_scale: str = "head", heads_in_layer: int = 0) -> dict[str, pd.DataFrame]:
    """A panel's datasets (scrub.panel_frames) from its stack's numbers, computed only when no kept dataset
    answers. A layer's colour range is read over its every head (heads_in_layer), sent or not."""
    whole = len(stack.heads) >= heads_in_layer or weight_scale != "layer"
    layer_values = None if whole else stack.with_heads(tuple(range(heads_in_layer))).values()  # (nl, nh, R, K)
    return scrub.panel_frames(stack.values(), stack.layers, stack.heads, scheme, raster, name, weight_scale,
                              layer_values, weights=isinstance(stack, stacks.HeadStack) and stack.stage == "weights")


def _lines_frames(stack: stacks.HeadStack, first_query: int = 0, last_query: int | None = None, first_key: int = 0,
                  last_key: int | None = None) -> dict[str, pd.DataFrame]:
    return lines.lines_frames(stack.values(), stack.layers, stack.heads, first_query, last_query, first_key, last_key)


def _neuron_frames(stack: stacks.NeuronStack) -> dict[str, pa.Table]:
    return neuron_chart.neuron_frames(stack.values(), stack.heads, stack.queries)


def toolbar_inside(key: str | None = None, described: str | None = None) -> str:
    """A style that brings Streamlit's toolbar (show data, PNG, spec, fullscreen) of the chart keyed `key`, or of
    the chart whose description starts with `described`, down into the chart's own top row, where its inputs stand
    on the left and nothing at the right end: it hung over the 47 px above the chart, on the caption there. (A chart
    drawn into a placeholder, the induction lab's, carries no class of its key: its description finds it.)"""
    chart = (f".st-key-{key}" if key else
             f"[data-testid='stElementContainer']:has([data-testid='stVegaLiteChart'][aria-label^='{described}'])")
    return style_tag(filled(_TOOLBAR_INSIDE, chart=chart))
