"""Attention Anatomy: BERT's self-attention dissected step by step, on live data.

`streamlit run streamlit_app.py` serves the page (page.py) as a Streamlit App, whose lifespan starts importing
torch before the first reader arrives and opens a browser tab (components/server/app_start.py), with a route
that answers the switch view's toggles (components/api/routes.py). The numbers come from attention/ (no
Streamlit there), the drawing from components/.
"""

import streamlit as st

from components.api.routes import routes
from components.server.app_start import lifespan

app = st.App("page.py", lifespan=lifespan, routes=routes())
