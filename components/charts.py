"""Drawing a chart so that the next rerun, with other numbers, only swaps its data.

st.altair_chart names a chart's data by a hash of its contents, so the spec changes with
every new head and the browser builds the whole Vega view again (a few hundred ms per chart
on a busy machine). Handing the data over separately keeps the spec the same from rerun to
rerun: Streamlit then replaces the data inside the view it already drew.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st


def show(chart: alt.TopLevelMixin, *, key: str, width: str | int = "content") -> None:
    """Draw a chart; a single-view chart with a DataFrame keeps its spec stable across reruns."""
    if not (isinstance(chart, alt.Chart) and isinstance(chart.data, pd.DataFrame)):
        st.altair_chart(chart, width=width, key=key)
        return
    bare = chart.copy(deep=False)
    bare.data = alt.Undefined
    # The heatmap builder's specs are checked against the schema by the tests; re-checking
    # them on every rerun cost more than drawing them.
    st.vega_lite_chart(chart.data, bare.to_dict(validate=False), width=width, key=key)
