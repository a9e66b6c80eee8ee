"""The scaling lab's charts: the spread of q·k against d_k, softmax's entropy and largest weight under each
scaling (with τ picked in the browser), and one row's weights at several temperatures. Numbers in, Vega-Lite out."""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt

from attention.stages.limits import PAGE_TEMPERATURE, PAGE_TEMPERATURE_STEP
from components.charts.heatmap import picked
from components.charts.lettering import title_lines
from components.charts.token_axes import labelled, labels_name

HEAD_SIZES = tuple(2**power for power in range(10))  # d_k = 1, 2, 4, … 512
FIXED_SCALINGS = ("none", "sqrt", "linear")
SCALINGS = (*FIXED_SCALINGS, "temperature")  # in the legend's order: a table's "rank" column is the place here
TAU = "temperature"  # the chart's τ selection, and the column whose rows it keeps
SERIES = {"none": "q·k measured", "sqrt": "q·k / √d_k", "linear": "q·k / d_k"}
THEORY = "d_k (theory)"
# One colour per scaling on every chart: red for the collapse, the theme's blue for the answer.
COLOURS = {"none": "#c0392b", "sqrt": "#1f4e9c", "linear": "#e69f00", "temperature": "#8e6bbf"}
THEORY_COLOUR = "#7f7f7f"
# One shape per scaling too, for the points on its line and in the legend: a reader who cannot tell the colours apart
# (red and orange under protanopia: charts/colour_vision.py) tells the lines apart by them. Theory is a line alone.
SHAPES = {"none": "circle", "sqrt": "square", "linear": "triangle-up", "temperature": "diamond"}
THEORY_SHAPE = "stroke"
CHART_WIDTH = 560  # px, a chart's plot at most
AXIS_PX = 90  # px left of a plot for its axis' labels and title
PANELS_BESIDE_PX = 480  # px: a column narrower than this puts softmax's two panels under each other
# Streamlit's default "fit" squeezes the plot to leave room for the title and legend; pad keeps our sizes.
PAD = alt.AutoSizeParams(type="pad", contains="padding")


def plot_width(width: int) -> int:
    """A chart's plot in a column width px wide, with room for its axis."""
    return max(160, min(CHART_WIDTH, width - AXIS_PX))


def legend_under(width: int, columns: int) -> alt.Legend:
    """A legend under the plot, its entries `columns` to a row, or one to a row in a column narrower than
    PANELS_BESIDE_PX (a phone): in one long row they ran past the page's edge."""
    return alt.Legend(orient="bottom", columns=columns if width >= PANELS_BESIDE_PX else 1)


def variance_chart(data, width: int) -> alt.LayerChart:
    """variance_table's rows (a DataFrame, or the name of one): measured variance and theory against d_k, in a
    column width px wide."""
    log2 = alt.Scale(type="log", base=2)
    base = alt.Chart(data).encode(
        x=alt.X("d_k:Q", scale=log2, title="head size d_k (log scale)", axis=alt.Axis(values=list(HEAD_SIZES))),
        y=alt.Y("variance:Q", scale=alt.Scale(type="log"), title="variance of the score (log scale)"),
        color=alt.Color("series:N", title=None, legend=legend_under(width, 4),
                        scale=alt.Scale(domain=[THEORY, *SERIES.values()],
                                        range=[THEORY_COLOUR, *(COLOURS[s] for s in SERIES)])),
        shape=alt.Shape("series:N", title=None, legend=legend_under(width, 4),
                        scale=alt.Scale(domain=[THEORY, *SERIES.values()],
                                        range=[THEORY_SHAPE, *(SHAPES[s] for s in SERIES)])),
        tooltip=["d_k:Q", "series:N", alt.Tooltip("variance:Q", format=".4g")],
    )
    is_theory = alt.datum.series == THEORY
    measured = base.transform_filter(~is_theory)
    theory = base.transform_filter(is_theory).mark_line(strokeDash=[6, 4], strokeWidth=2)  # drawn on top
    return alt.layer(measured.mark_line(), measured.mark_point(filled=True), theory).properties(
        title=title_lines("var(q·k) for random unit-variance q, k", width), width=plot_width(width), height=300,
        autosize=PAD)


def softmax_chart(data, by_head: bool, title: str, tokens: int, width: int, tau: float | None = None
                  ) -> alt.HConcatChart | alt.VConcatChart:
    """Mean entropy and mean largest weight side by side (under each other in a column narrower than
    PANELS_BESIDE_PX), against d_k or per trained head, for the rows of random_softmax_table or
    trained_heads_table (a DataFrame, or the name of one), in a column width px wide.

    The dotted rule is a uniform row over the text's tokens: entropy log T, largest weight 1/T.
    tau: the rows hold every τ sent, and a τ input above the chart, starting there, keeps that τ's rows.
    """
    colour = alt.Color("scaling:N", title="scores", legend=legend_under(width, 4),
                       sort=alt.EncodingSortField("rank", op="min"),  # SCALINGS' order, whatever τ's label
                       scale=alt.Scale(range=[COLOURS[s] for s in SCALINGS]))
    beside = width >= PANELS_BESIDE_PX
    panel_width = (width - 2 * AXIS_PX) // 2 if beside else plot_width(width)
    panels = []
    for field, field_title, uniform in (("entropy", "mean entropy (nats)", math.log(tokens)),
                                        ("max_weight", "mean largest weight", 1 / tokens)):
        marks = (_per_head_marks(field, field_title, colour) if by_head
                 else _head_size_marks(field, field_title, colour, legend_under(width, 4)))
        if tau is not None and not panels:
            marks = marks.add_params(tau_input(tau))
        # Named for a screen reader (Vega gives a mark without a description a role and no name).
        rule = alt.Chart().mark_rule(strokeDash=[2, 3], color="gray", description=(
            f"dotted rule: a uniform row over the text's {tokens} tokens, {field_title} {uniform:.3g}")
        ).encode(y=alt.datum(uniform))
        panel = alt.layer(marks, rule)
        if tau is not None:  # on the whole panel: the rule, drawn once a row, is drawn once a d_k, not once a row sent
            # A row with no τ (a fixed scaling's, random_softmax_table) is kept at every τ.
            panel = panel.transform_filter(f"!isValid(datum.{TAU}) || abs(datum.{TAU} - {picked(TAU)}) < 1e-6")
        panels.append(panel.properties(width=panel_width, height=240))
    return (alt.hconcat if beside else alt.vconcat)(*panels, data=data).properties(title=title_lines(title, width),
                                                                                   autosize=PAD)


def tau_input(start: float) -> alt.Parameter:
    """τ picked in the browser: a point selection of the TAU column bound to a range input over the slider's grid,
    starting at start (as scrub.picker's layer and head; Streamlit reports it, and the page follows)."""
    return alt.selection_point(name=TAU, fields=[TAU], value=[{TAU: start}], clear=False,
                               bind=alt.binding_range(min=PAGE_TEMPERATURE.low, max=PAGE_TEMPERATURE.high,
                                                      step=PAGE_TEMPERATURE_STEP, name="τ"))


def _head_size_marks(field: str, title: str, colour: alt.Color, legend: alt.Legend) -> alt.LayerChart:
    """One line per scaling against d_k, its points of the scaling's shape; τ's is dashed, since τ = 1 lies exactly
    on "none"."""
    shape = alt.Shape("scaling:N", title="scores", legend=legend, sort=alt.EncodingSortField("rank", op="min"),
                      scale=alt.Scale(range=[SHAPES[s] for s in SCALINGS]))
    dashed = alt.condition(alt.datum.rank == SCALINGS.index("temperature"), alt.value([5, 3]), alt.value([1, 0]))
    base = alt.Chart().encode(
        x=alt.X("d_k:Q", scale=alt.Scale(type="log", base=2), title="head size d_k (log scale)",
                axis=alt.Axis(values=list(HEAD_SIZES))),
        y=alt.Y(f"{field}:Q", title=title), color=colour, strokeDash=dashed,
        tooltip=["d_k:Q", "scaling:N", alt.Tooltip(f"{field}:Q", format=".3f")],
    )
    return base.mark_line() + base.mark_point(filled=True).encode(shape=shape)


def _per_head_marks(field: str, title: str, colour: alt.Color) -> alt.LayerChart:
    """A bar per scaling for the mean over the heads, a tick for each head."""
    x = alt.X("scaling:N", title=None, sort=alt.EncodingSortField("rank", op="min"), axis=alt.Axis(labelAngle=0))
    bars = alt.Chart().mark_bar(opacity=0.45).encode(x=x, y=alt.Y(f"mean({field}):Q", title=title), color=colour)
    ticks = alt.Chart().mark_tick(thickness=2).encode(
        x=x, y=alt.Y(f"{field}:Q", title=title), color=colour,
        tooltip=["head:Q", "scaling:N", alt.Tooltip(f"{field}:Q", format=".3f")])
    return bars + ticks


def temperature_chart(data, tokens: Sequence[str], title: str, width: int) -> alt.LayerChart:
    """temperature_table's rows (a DataFrame, or the name of one): a line of weights over the key tokens per τ,
    in a column width px wide (its legend under the plot)."""
    step = math.ceil(len(tokens) / 40)  # at most ~40 labels on long texts
    axis = alt.Axis(labelExpr=f"{labels_name(tokens)}[datum.value]", values=list(range(0, len(tokens), step)),
                    labelAngle=-45, title="key token")
    base = alt.Chart(data).encode(
        x=alt.X("position:O", axis=axis),
        y=alt.Y("weight:Q", title="attention weight", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("label:N", title="temperature", sort=alt.EncodingSortField("tau", op="min"),
                        scale=alt.Scale(scheme="viridis"), legend=legend_under(width, 3)),
        tooltip=["label:N", "key_token:N", alt.Tooltip("weight:Q", format=".4f")],
    )
    return labelled(base.mark_line() + base.mark_point(filled=True), tokens).properties(title=title_lines(title, width),
                                                                         width=plot_width(width),
                                                                         height=280, autosize=PAD)


CHARTS = {"variance": variance_chart, "softmax": softmax_chart, "temperature": temperature_chart}
