"""Attention Anatomy: BERT's self-attention dissected step by step, on live data.

`streamlit run streamlit_app.py` serves the page (page.py) as a Streamlit App, which lets the server start
importing the heavy libraries before the first reader arrives (components/server/warm_start.py). The page's
script is page.py; the numbers come from attention/ (no Streamlit there), the drawing from components/.
"""

import streamlit as st

from components.server.warm_start import warm_start

app = st.App("page.py", lifespan=warm_start)
