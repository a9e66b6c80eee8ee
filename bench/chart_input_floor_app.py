"""A floor for bench/chart_input_floor.py: bench/floor_app.py's slider and line, and one 32-token heatmap whose six
layers are all in the browser, a range input above it picking the layer drawn (as components/charts/scrub.py's
charts do). `run` says what a move of that input reruns: the whole page (`page`), a fragment holding the chart alone
(`fragment`), or nothing, the server never told (`none`). The runs write the layer into the link."""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from components.charts.draw import spec_and_frames
from components.page import chart_keys
from components.private_hooks import arrow_dataset

LAYERS, TOKENS = 6, 32
run = st.query_params.get("run", "page")


@st.cache_data
def cells() -> pd.DataFrame:
    """Every layer's weights, one row a cell: (layer, row, column, weight)."""
    rows = np.random.default_rng(0).dirichlet(np.ones(TOKENS), size=(LAYERS, TOKENS)).astype(np.float32)
    layer, row, column = np.meshgrid(range(LAYERS), range(TOKENS), range(TOKENS), indexing="ij")
    return pd.DataFrame({"layer": layer.ravel(), "row": row.ravel(), "column": column.ravel(),
                         "weight": rows.ravel()})


def chart(run: str) -> alt.Chart:
    """The heatmap, its layer picked by a selection Streamlit reports, or (run "none") by a parameter it never sees."""
    bound = alt.binding_range(min=0, max=LAYERS - 1, step=1, name="layer")
    layer = (alt.param(name="layer", value=0, bind=bound) if run == "none" else
             alt.selection_point(name="layer", fields=["layer"], value=0, bind=bound))
    picked = "datum.layer == layer" if run == "none" else layer
    return alt.Chart(cells()).mark_rect().encode(
        x="column:O", y="row:O", color=alt.Color("weight:Q", scale=alt.Scale(scheme="blues", domain=[0, 0.3])),
    ).add_params(layer).transform_filter(picked).properties(width=420, height=420, usermeta={
        "embedOptions": {"renderer": "canvas"}})


@st.cache_resource
def kept(run: str) -> tuple[dict, dict]:
    """The chart's spec and its data as Arrow bytes, built once for each kind of page: a run sends the same, as the
    app's charts do (components/charts/draw.py)."""
    spec, frames = spec_and_frames(chart(run))
    return spec, {name: arrow_dataset(frame) for name, frame in frames.items()}


def drawn() -> None:
    spec, datasets = kept(run)
    spec = {**spec, "datasets": datasets}
    if run == "none":
        st.vega_lite_chart(None, spec, key="chart")
        return
    picked = st.vega_lite_chart(None, spec, key="chart", on_select="rerun", selection_mode=["layer"])
    points = picked.selection.get("layer") or [{"layer": 0}]
    st.query_params["layer"] = str(points[0]["layer"])


x = st.slider("x", min_value=0, max_value=100, key="x")
st.write(f"x is {x}")
chart_keys.listen()  # a key on the chart's input is sent at once, as the app's pages do
st.fragment(drawn)() if run == "fragment" else drawn()
