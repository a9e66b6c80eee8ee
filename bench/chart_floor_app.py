"""A second floor for bench/every_control.py: bench/floor_app.py's slider and line, and one of the app's heatmaps of 32
tokens whose numbers are new at each move, drawn as the lesson draws its heatmaps (on a canvas, the cheaper of the
app's two ways to draw one; its spec the same from move to move, its numbers swapped in: components/caches/
chart_memos.py's kept_heatmap). What Streamlit and Vega take to show a chart's new numbers in a page with nothing
else: no control that changes what a chart shows can settle faster."""

import numpy as np
import streamlit as st

from components.caches.chart_memos import kept_heatmap
from components.charts.draw import draw_spec

TOKENS = 32

x = st.slider("x", min_value=0, max_value=100, key="x")
st.write(f"x is {x}")
weights = np.random.default_rng(x).dirichlet(np.ones(TOKENS), size=TOKENS).astype(np.float32)  # (T, T), rows sum to 1
labels = [f"{index}: token" for index in range(TOKENS)]
draw_spec(*kept_heatmap(weights, labels, labels, title="Attention weights", canvas=True), key="chart")
