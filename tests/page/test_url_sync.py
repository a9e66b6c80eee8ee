"""What the page's own URL sync keeps that Streamlit 1.67's bind="query-params" would not.

A bound widget writes its option's label to the URL (scaling=d_k, query=4: an), a toggle as
true/false, drops the parameter of a hidden widget, writes `key=` for a segmented control
clicked off, and leaves the URL to the browser, so AppTest sees no change from a move. The
page keeps one sync for every control (components/page/controls.py); these pin what it does.
"""

from __future__ import annotations

from tests import pages


def test_a_hidden_control_keeps_its_value_in_the_link_and_on_the_page():
    page = pages.open_page({"scaling": "temperature", "temperature": "4"})
    page.segmented_control(key="scaling").set_value("none").run()
    pages.assert_healthy(page)
    assert "temperature" not in [slider.key for slider in page.slider], "τ is drawn for the temperature scaling only"
    assert page.query_params["temperature"] == "4", "the link still holds τ for when it comes back"
    page.segmented_control(key="scaling").set_value("temperature").run()
    assert page.slider(key="temperature").value == 4.0
    assert (page.query_params["scaling"], page.query_params["temperature"]) == ("temperature", "4")


def test_a_choice_clicked_off_keeps_the_last_one_in_the_link():
    page = pages.open_page({"source": "random", "head_dim": "48"})
    page.segmented_control(key="source").set_value(None).run()
    pages.assert_healthy(page)
    assert page.query_params["source"] == "random"
    assert page.slider(key="head_dim").value == 48, "still the random source's controls"


def test_links_name_choices_by_value_and_flags_as_1_or_0():
    page = pages.open_page({"view": "neuron", "scaling": "linear", "query": "4"})
    pages.assert_healthy(page)
    assert not page.warning
    pages.pick_on_chart(page, "chart-neuron", query=3)
    assert (page.query_params["view"], page.query_params["scaling"], page.query_params["query"]) == \
        ("neuron", "linear", "3")
    page = pages.open_page({"hide_special": "1"})
    pages.assert_healthy(page)
    assert page.toggle(key="hide_special").value is True
    assert page.query_params["hide_special"] == "1"
