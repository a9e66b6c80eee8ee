"""Every chart reads what its pickers hold through the input's own signal (private_hooks.bound_input_signal), never
through the selection's store: Vega-Lite's documented `layer.layer` reads the store, which Streamlit sets back to
the reader's last pick when the server sends the chart a new value under the same key (a follower moved by its
teacher then saw its own last head, under an input, a heading and a link that said the teacher's). The other
signals Vega-Lite makes for a selection (`layer_store`, `layer_tuple`, …) are its own business too.

The charts come from the page itself (AppTest), or from their builders where the page would first have to train
(the counting lab's maps, the induction maps); tests/browser/*_e2e.py move their inputs in Chromium, and
tests/browser/test_class_breakaway_e2e.py follows a teacher after breaking away.
"""

from __future__ import annotations

import json
import re

import pytest

from components.charts import counting_maps, induction
from components.charts.heatmap import CELLS, named
from components.private_hooks import bound_input_signal
from tests import rendered
from tests.pages import assert_healthy, charts, open_page

# The signals Vega-Lite compiles a selection into, after its name: its input (one per field), the data of its
# picks and the steps that fill them.
INSIDE = ("store", "tuple", "tuple_fields", "modify", "toggle")
PAIR = "what if it snows"
MOVES = "What moves α·‖f(x)‖"  # the one-head view's stage with a strip of bars under the heatmap
PAGES = [  # (view, its link's query, the one-head view's stage)
    ("head", {}, None),
    ("head", {}, MOVES),
    ("heads", {"aggregate": "rollout"}, None),
    ("neuron", {}, None),
    ("compare", {"text_b": PAIR}, None),
    ("lab", {"scaling": "temperature"}, None),
]


def selections(spec) -> dict[str, list[str]]:
    """{name: the fields it selects} of every selection a spec defines, at any depth."""
    found = {}
    if isinstance(spec, dict):
        for param in spec.get("params", []):
            if "select" in param:
                select = param["select"]
                found[param["name"]] = select.get("fields", []) if isinstance(select, dict) else []
        for value in spec.values():
            found |= selections(value)
    elif isinstance(spec, list):
        for value in spec:
            found |= selections(value)
    return found


def strings(spec):
    """Every string of a spec, at any depth: the expressions among them."""
    if isinstance(spec, str):
        yield spec
    elif isinstance(spec, dict):
        for value in spec.values():
            yield from strings(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from strings(value)


def inside_reads(spec: dict) -> list[str]:
    """The expressions of a spec that read a selection's store (`name.field`) or a signal Vega-Lite makes inside one
    of its selections other than its input's."""
    names = "|".join([re.escape(f"{name}_{suffix}") for name in selections(spec) for suffix in INSIDE]
                     + [re.escape(f"{name}.{field}") for name, fields in selections(spec).items() for field in fields])
    if not names:
        return []
    signal = re.compile(rf"(?<![\w.$])({names})(?![\w$])")
    return [text for text in strings(spec) if signal.search(text)]


def open_at(view: str, query: dict, stage: str | None = None):
    """The page of a view, at the one-head view's stage when given, checked healthy."""
    page = open_page(view=view, **query)
    if stage is not None:
        page.segmented_control(key="head_stage").set_value(stage).run()
    assert_healthy(page)
    return page


@pytest.mark.parametrize(("view", "query", "stage"), PAGES, ids=[f"{v}-{s or ''}" for v, _, s in PAGES])
def test_the_pages_charts_read_their_pickers_inputs_not_their_stores(view, query, stage):
    page = open_at(view, query, stage)
    specs = [json.loads(chart.proto.spec) for chart in charts(page)]
    assert any(selections(spec) for spec in specs), "the view has a chart with a selection to check"
    assert [text for spec in specs for text in inside_reads(spec)] == []


def test_the_trained_views_maps_read_their_pickers_inputs_not_their_stores():
    window = counting_maps.maps_chart(named(counting_maps.WINDOW, CELLS), named(counting_maps.LETTERS, CELLS),
                                      {3: ("a", "b", "c"), 4: ("a", "b", "c", "d")}, ("x", "y"), 3, (2, 8), 300,
                                      True, 4).to_dict(validate=False)
    steps = induction.maps_spec(induction.maps_layout(4, 600), 30, 10)
    for spec in (window, steps):
        assert selections(spec), "the maps have an input"
        assert inside_reads(spec) == []


def test_the_check_finds_a_read_of_a_selections_store_and_lets_its_inputs_signal_be():
    spec = {"params": [{"name": "layer", "select": {"type": "point", "fields": ["layer"]}}],
            "title": {"text": {"expr": f"'layer ' + {bound_input_signal('layer')}"}},
            "transform": [{"filter": "datum.layer == layer.layer[0]"}, {"filter": "length(data('layer_store'))"}]}
    assert inside_reads(spec) == ["datum.layer == layer.layer[0]", "length(data('layer_store'))"]


def test_vega_reads_the_picks_where_the_page_placed_them():
    """A title that joins a pick to text: the documented form holds the picks in an array, which `+` would join as
    text, so the wrong form shows here as a wrong number rather than no chart."""
    page = open_at("heads", {"layer": "4", "aggregate": "mean"})
    assert "Mean of the heads of layer 4" in rendered.svg(charts(page)[0])
    page = open_at("head", {"layer": "3", "head": "7"}, MOVES)
    assert "of each key, layer 3, head 7" in rendered.svg(charts(page)[0])
