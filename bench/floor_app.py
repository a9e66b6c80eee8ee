"""The floor for bench/page_speed.py: the cheapest page Streamlit can rerun, one slider and one line."""

import streamlit as st

x = st.slider("x", min_value=0, max_value=100, key="x")
st.write(f"x is {x}")
