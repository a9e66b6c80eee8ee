"""Download buttons: the current head as CSV, each chart as PNG and SVG.

Charts are rendered to files only when a button is clicked (deferred data), so
that a slider move never pays for images nobody asked for.
"""

from __future__ import annotations

import altair as alt
import streamlit as st


def chart_downloads(chart: alt.TopLevelMixin, name: str) -> None:
    """Two small buttons under a chart: PNG and SVG of exactly what is drawn."""
    spec = chart.to_dict()
    png, svg = st.columns(2)
    png.download_button("PNG", data=lambda: _png(spec), file_name=f"{name}.png", mime="image/png",
                        key=f"png-{name}", on_click="ignore", icon=":material/image:")
    svg.download_button("SVG", data=lambda: _svg(spec), file_name=f"{name}.svg", mime="image/svg+xml",
                        key=f"svg-{name}", on_click="ignore", icon=":material/draw:")


def csv_download(csv_text: str, name: str) -> None:
    st.download_button("Download CSV", data=csv_text, file_name=f"{name}.csv", mime="text/csv",
                       key="csv", on_click="ignore", icon=":material/download:")


def _png(spec: dict) -> bytes:
    import vl_convert

    return vl_convert.vegalite_to_png(spec, scale=2)


def _svg(spec: dict) -> str:
    import vl_convert

    return vl_convert.vegalite_to_svg(spec)
