"""Drawing a chart so that the next rerun, with other numbers, only swaps its data.

st.altair_chart names a chart's data by a hash of its contents, so the spec changes with
every new head and the browser builds the whole Vega view again (a few hundred ms per chart
on a busy machine). Handing the data over separately keeps the spec the same from rerun to
rerun: Streamlit then replaces the data inside the view it already drew.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import pyarrow as pa
import streamlit as st

from components.charts.lettering import READING, Lettering


def show(chart: alt.TopLevelMixin, *, key: str, width: str | int = "content", lettering: Lettering = READING,
         **selection) -> None:
    """Draw a chart whose datasets are named by their place in it, so its spec stays the same from rerun
    to rerun. selection: st.vega_lite_chart's on_select and selection_mode."""
    spec, frames = spec_and_frames(chart)
    draw_spec(spec, frames, key=key, width=width, lettering=lettering, **selection)


def spec_and_frames(chart: alt.TopLevelMixin) -> tuple[dict, dict[str, pd.DataFrame]]:
    """The chart's spec, its datasets named by their place in it (named_data), and those datasets by name.
    The heatmap builder's specs are checked against the schema by the tests; re-checking them on every rerun
    cost more than drawing them."""
    bare, frames = named_data(chart)
    return bare.to_dict(validate=False), frames


def draw_spec(spec: dict, frames: dict[str, pd.DataFrame | bytes], *, key: str, width: str | int = "content",
              lettering: Lettering = READING, **selection) -> None:
    """Draw a Vega-Lite spec whose data are named datasets (frames, by name: DataFrames, or the Arrow bytes
    of chart_memos.chart_data), so that the next rerun with the same spec only swaps their rows; its text at the
    lettering's size. selection: st.vega_lite_chart's on_select and selection_mode."""
    config = {**spec.get("config", {}), **lettering.vega_config()}
    datasets = {name: arrow_table(frame) for name, frame in frames.items()}
    st.vega_lite_chart(None, {**spec, **({"config": config} if config else {}), "datasets": datasets}, width=width,
                       key=key, **selection)


def arrow_table(frame: pd.DataFrame | pa.Table | bytes) -> pa.Table | bytes:
    """A chart's dataset as the Arrow table Streamlit sends, built from its columns' arrays. A DataFrame with the
    default index skips pandas' own way to Arrow (pyarrow's pandas_compat: its checks and metadata), which took a
    quarter of a rerun's server time in the generation view and the lesson. The browser reads the same rows: a
    chart's rows are its columns (that index is never one), and NaN is null, as pandas' way makes it. Any other
    frame goes pandas' way, in Streamlit; Arrow tables and bytes pass as they are."""
    if not isinstance(frame, pd.DataFrame) or not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 \
            or frame.index.step != 1 or not all(isinstance(name, str) for name in frame.columns):
        return frame
    return pa.table({name: pa.array(column.to_numpy(), from_pandas=True) for name, column in frame.items()})


def lettered(chart: alt.TopLevelMixin, lettering: Lettering) -> alt.TopLevelMixin:
    """The chart with its text at the lettering's size, for st.altair_chart (draw_spec does the same to a spec)."""
    config = lettering.vega_config()
    return chart.configure(**config) if config else chart


def named_data(chart: alt.TopLevelMixin) -> tuple[alt.TopLevelMixin, dict[str, pd.DataFrame]]:
    """A copy of the chart whose DataFrames are references to datasets named by their place in it
    ("data-0", "data-1", … depth first) or, a frame whose attrs hold a "name", by that name (an expression of the
    chart's reads that dataset: heatmap.clip_end), and those DataFrames by name.

    Altair names a dataset by a hash of its contents; a name that says where the data sits instead
    keeps a layered or concatenated chart's spec the same when only its numbers change. One frame that several
    layers draw (a signed heatmap's cells, and the marks over them) is one dataset, sent once. Hand both to
    st.vega_lite_chart as {**spec, "datasets": frames}.
    """
    frames: dict[str, pd.DataFrame] = {}
    names: dict[int, str] = {}  # id of a frame met already -> its name

    def rename(part):
        part = part.copy(deep=False)
        if isinstance(part.data, pd.DataFrame):  # a frame that names itself keeps its name: an expression reads it
            name = names.get(id(part.data)) or part.data.attrs.get("name", f"data-{len(frames)}")
            names[id(part.data)] = name
            frames[name] = part.data
            part.data = alt.NamedData(name=name)
        for children in ("layer", "hconcat", "vconcat", "concat"):
            if getattr(part, children, alt.Undefined) is not alt.Undefined:
                setattr(part, children, [rename(child) for child in getattr(part, children)])
        return part

    return rename(chart), frames


def naming_layer(dataset: str, **mark) -> alt.Chart:
    """A layer that draws nothing, from the named dataset (mark: the point mark's properties): Vega-Lite makes a
    dataset only for the marks that draw from it, and an expression reads it by its name (data_value)."""
    return alt.Chart(alt.NamedData(name=dataset)).transform_filter("false").mark_point(**mark)


def with_named_data(chart: alt.Chart, dataset: str) -> alt.LayerChart:
    """chart with a naming_layer of dataset beside it, for an expression of the chart to read (data_value)."""
    return layered(chart, naming_layer(dataset, aria=False))


def layered(chart: alt.TopLevelMixin, *beside: alt.Chart) -> alt.LayerChart:
    """chart as a layer chart, with the layers beside it (a layered chart is kept as it is, the layers added): its
    top-level properties (autosize, config, description, usermeta), which no layer may hold, and its title lifted
    onto the layer chart. A layer chart is where label_stand_ins.with_labels names its datasets."""
    if isinstance(chart, alt.LayerChart):
        return alt.layer(chart, *beside) if beside else chart
    top = {key: chart[key] for key in ("autosize", "config", "description", "usermeta", "title")
           if chart[key] is not alt.Undefined}
    inner = chart.copy()
    for key in top:
        inner[key] = alt.Undefined
    return alt.layer(inner, *beside, **top)


def one_row(dataset: str, **fields) -> dict[str, pd.DataFrame]:
    """A dataset of one row (fields: its columns' values), by name, for draw_spec beside a chart's own: the value an
    expression of the chart reads (data_value) from a dataset a naming_layer keeps in its spec."""
    return {dataset: pd.DataFrame({name: [value] for name, value in fields.items()})}


def data_value(dataset: str, row: str | int, field: str, otherwise: float | str) -> str:
    """An expression: the field of a row (a number or an expression) of the named dataset, or otherwise (a number or
    an expression) while the dataset has no such row. A parameter that reads a number so takes it from the data: a
    new number is new rows swapped into the chart drawn, where a number written into the spec made a new chart."""
    line = f"data('{dataset}')[{row}]"
    return f"{line} ? {line}.{field} : {otherwise}"
