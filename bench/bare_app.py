"""A bare Streamlit page, a title and nothing else: what a first paint costs before any script of the app's."""

import streamlit as st

st.title("A bare page")
