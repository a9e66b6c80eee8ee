"""chart_memos.chart_data keeps a student's last charts in their session: a rerun that draws them again builds
nothing, even when the class's other charts have pushed them out of the shared cache."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def page():
    """Draws the datasets of a chart of `rows` rows, after emptying the shared cache as a class would; with
    `views`, each run numbered as the app numbers its view's runs (chart_memos.new_run)."""
    import pandas as pd
    import streamlit as st

    from components.caches import chart_memos

    def rows_chart(rows: int, width: int) -> dict[str, pd.DataFrame]:
        st.session_state.built = st.session_state.get("built", 0) + 1
        return {"data": pd.DataFrame({"x": range(rows), "label": ["x" * width] * rows})}

    if st.session_state.get("views"):
        chart_memos.new_run()
    chart_memos._chart_data.clear()
    datasets = chart_memos.chart_data(rows_chart, st.session_state.get("rows", 3), st.session_state.get("width", 1))
    st.write(f"{len(datasets['data'])} bytes drawn")


def test_a_rerun_that_draws_the_same_chart_builds_nothing_though_the_shared_cache_lost_it():
    at = AppTest.from_function(page).run()
    drawn = at.markdown[0].value
    at.run()
    assert at.session_state.built == 1
    assert at.markdown[0].value == drawn


def test_the_session_keeps_its_last_charts_only():
    at = AppTest.from_function(page).run()
    for rows in range(4, 4 + 5):  # five more charts: with the first, the six a session keeps
        at.session_state.rows = rows
        at.run()
    assert at.session_state.built == 6
    at.session_state.rows = 3
    at.run()
    assert at.session_state.built == 6, "the first is still kept"
    at.session_state.rows = 20
    at.run()
    at.session_state.rows = 4  # the oldest of the six now: pushed out by the chart of 20 rows
    at.run()
    assert at.session_state.built == 8


def test_a_session_keeps_no_more_than_its_bytes_but_always_its_newest_chart():
    at = AppTest.from_function(page)
    at.session_state.width = 2**20  # a megabyte a row
    at.run()
    for rows in (4, 5):  # 3 + 4 MB kept, and 5 more are over 8 MB: the chart of 3 rows goes
        at.session_state.rows = rows
        at.run()
    at.session_state.rows = 5
    at.run()
    assert at.session_state.built == 3
    at.session_state.rows = 3
    at.run()
    assert at.session_state.built == 4
    at.session_state.rows = 9  # more than the bound alone: kept, since it is on the page
    at.run()
    at.run()
    assert at.session_state.built == 5


def test_a_chart_the_last_two_runs_did_not_draw_is_let_go():
    at = AppTest.from_function(page)
    at.session_state.views = True
    at.run()
    for rows in (4, 5):  # the chart of 3 rows was drawn two runs ago: gone when the one of 5 is kept
        at.session_state.rows = rows
        at.run()
    assert at.session_state.built == 3
    at.session_state.rows = 4  # drawn in the run before the last: still kept
    at.run()
    assert at.session_state.built == 3
    at.session_state.rows = 3
    at.run()
    assert at.session_state.built == 4
