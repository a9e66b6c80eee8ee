"""Download buttons: the current head as CSV, each chart as PNG and SVG (behind one button a chart).

Files are made only when a button is clicked (deferred data), so that a slider
move never pays for a file nobody asked for.
"""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import streamlit as st


def chart_downloads(make_chart: Callable[[], alt.TopLevelMixin], key: str, name: str, title: str | None = None
                    ) -> None:
    """A "Download chart" button under a chart that opens on two: PNG and SVG of make_chart() (with another title
    if given), built when one is clicked. In a popover, whose buttons the browser draws only when it opens: two
    buttons in columns under every chart were drawn again at every rerun (the lab's four charts: about 40 ms a
    press)."""
    png = svg = st.popover("Download chart", icon=":material/download:")

    def spec() -> dict:  # built on click only: building and retitling a chart has Altair validate it
        chart = make_chart()
        return (chart if title is None else chart.properties(title=title)).to_dict()

    png.download_button("PNG", data=lambda: _png(spec()), file_name=f"{name}.png", mime="image/png",
                        key=f"png-{key}", on_click="ignore", icon=":material/image:")
    svg.download_button("SVG", data=lambda: _svg(spec()), file_name=f"{name}.svg", mime="image/svg+xml",
                        key=f"svg-{key}", on_click="ignore", icon=":material/draw:")


def csv_download(make_csv, name: str) -> None:
    """make_csv() -> str is called on click only: a 512-token head is 262,144 rows."""
    st.download_button("Download CSV", data=make_csv, file_name=f"{name}.csv", mime="text/csv",
                       key="csv", on_click="ignore", icon=":material/download:")


def _png(spec: dict) -> bytes:
    import vl_convert

    return vl_convert.vegalite_to_png(spec, scale=2)


def _svg(spec: dict) -> str:
    import vl_convert

    return vl_convert.vegalite_to_svg(spec)
