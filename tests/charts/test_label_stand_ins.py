"""A scrubbed chart's spec built once on stand-in labels, then given a text's own (charts/label_stand_ins.with_labels):
the same chart as one built on the text's labels, and the same kept spec, and the same spec drawn, for every text of
those lengths: only the labels' datasets differ."""

from __future__ import annotations

import json
import re

import pytest

from components.charts import grid, neuron_chart, scrub
from components.charts.heatmap import MAX_VECTOR_CELLS
from components.charts.label_stand_ins import LABEL, stand_ins, with_labels
from components.charts.lettering import READING
from components.charts.token_axes import token_labels
from components.views.parts.scrubbed import Panel

HOSTILE = ("[CLS]", "if", "'", '"', "datum", "<b>", "\\", "[SEP]")  # words an expression or HTML would choke on
OTHER = ("[CLS]", "a", "b", "c", "d", "e", "f", "[SEP]")  # as many tokens, another text
LONG = tuple(f"w{index}" for index in range(int(MAX_VECTOR_CELLS**0.5) + 1))  # drawn as a picture


def layout(panels: list[Panel], standing: dict, strip: tuple[str, ...] | None = None) -> tuple:
    """scrub.spec's arguments, as views/parts/scrubbed.scrub_panels makes them."""
    drawings = tuple(panel.drawing(f"p{index}", standing) for index, panel in enumerate(panels))
    strip_drawing = None if strip is None else ("‖f(x_j)‖", standing[strip], 300, READING)
    return drawings, (6, 12), True, True, False, True, strip_drawing


def drawn(panels: list[Panel], strip: tuple[str, ...] | None = None) -> tuple[str, str]:
    """The chart built on the real labels, and the one built on stand-ins then given them, as JSON (same_names)."""
    labels = [*(labels for panel in panels for labels in panel.label_lists()),
              *([] if strip is None else [strip])]
    standing = stand_ins(*labels)
    own = json.dumps(scrub.spec(*layout(panels, {label: label for label in standing}, strip)))
    given = json.dumps(inlined(*with_labels(scrub.spec(*layout(panels, standing, strip)), standing)))
    return same_names(own, {}), same_names(given, standing)


def inlined(spec: dict, frames: dict) -> dict:
    """The spec drawn, its label parameters given the values their datasets hold, and without the layers that name
    the datasets: what Vega draws once data() has read them."""
    def read(param: dict) -> dict:
        dataset = re.fullmatch(rf"pluck\(data\('([^']+)'\), '{LABEL}'\)", param.get("expr", ""))
        return param if dataset is None else {"name": param["name"], "value": list(frames[dataset[1]][LABEL])}

    def unnamed(part: dict) -> dict:
        kept = {key: [unnamed(child) for child in part[key] if child.get("data", {}).get("name") not in frames]
                for key in ("layer", "hconcat", "vconcat", "concat") if key in part}
        return {**part, **kept}

    return unnamed({**spec, "params": [read(param) for param in spec["params"]]})


def same_names(given: str, standing: dict) -> str:
    """given, the label parameters' names written as the real labels' (they are made from their contents), and
    Altair's names of views (a hash of the chart it built) as one."""
    for real, stand_in in standing.items():
        given = given.replace(token_labels(list(stand_in)).name, token_labels(list(real)).name)
    return re.sub(r"view_[0-9a-f]+_", "view_", given)


def panel(tokens: tuple[str, ...], title: str = "weights") -> Panel:
    return Panel(None, tokens, tokens, title)


@pytest.mark.parametrize("panels, strip", [
    ([panel(HOSTILE)], None),
    ([panel(HOSTILE)], HOSTILE),
    ([panel(HOSTILE, "Text A"), panel(OTHER, "Text B")], None),  # two texts of one length: two parameters
    ([panel(LONG)], None),
], ids=["cells", "with the value-norm strip", "two texts", "picture"])
def test_a_chart_given_its_labels_is_the_chart_built_on_them(panels, strip):
    own, given = drawn(panels, strip)
    assert given == own
    assert '"#0"' not in given and '"#1"' not in given, "no stand-in is left to be drawn"


def test_the_neuron_chart_given_its_labels_is_the_chart_built_on_them():
    """As views/parts/scrubbed.scrub_neuron draws it."""
    labels = tuple(f"{index}: {token}" for index, token in enumerate(HOSTILE))
    standing = stand_ins(labels)
    rest = (32, (12, len(labels)), True, True, "q·k", "q·k/√d", 600, READING)
    own = json.dumps(neuron_chart.spec(labels, *rest))
    given = json.dumps(inlined(*with_labels(neuron_chart.spec(standing[labels], *rest), standing)))
    assert same_names(given, standing) == same_names(own, {})
    assert '"#0"' not in given


@pytest.mark.parametrize("panels", [[panel(HOSTILE)], [panel(HOSTILE, "Text A"), panel(OTHER, "Text B")]],
                         ids=["one text", "two texts"])
def test_texts_of_one_length_draw_the_same_spec_and_differ_in_the_labels_datasets_alone(panels):
    """The browser swaps a chart's datasets where its spec is the same, and builds it again where not."""
    other = [panel(tuple(reversed(shown.row_labels)), shown.title) for shown in panels]
    drawings = []
    for shown in (panels, other):
        standing = stand_ins(*(labels for each in shown for labels in each.label_lists()))
        drawings.append(with_labels(scrub.spec(*layout(shown, standing)), standing))
    (first, first_labels), (second, second_labels) = drawings
    assert json.dumps(first) == json.dumps(second)
    assert first_labels.keys() == second_labels.keys()
    tokens = [list(frame[LABEL]) for frame in first_labels.values() if len(frame) == len(HOSTILE)]
    assert tokens == [list(each.row_labels) for each in panels]
    tokens = [list(frame[LABEL]) for frame in second_labels.values() if len(frame) == len(HOSTILE)]
    assert tokens == [list(each.row_labels) for each in other]


def test_texts_of_one_length_share_the_kept_spec():
    first, second = stand_ins(*panel(HOSTILE).label_lists()), stand_ins(*panel(OTHER).label_lists())
    assert layout([panel(HOSTILE)], first) == layout([panel(OTHER)], second)
    assert stand_ins(HOSTILE, OTHER)[HOSTILE] != stand_ins(HOSTILE, OTHER)[OTHER]


def test_texts_whose_query_picked_other_words_share_the_kept_spec_when_every_row_is_labelled():
    """kept_rows (the rows of the query's word, labelled whatever the step) change nothing on an axis that labels
    every row: a new text of the same length, its query on a word that comes back elsewhere, keeps the spec."""
    once, thrice = (Panel(None, OTHER, OTHER, "weights", kept_rows=rows) for rows in [(1,), (1, 3, 5)])
    standing = stand_ins(*once.label_lists())
    assert layout([once], standing) == layout([thrice], standing)
    own = {label: label for label in standing}
    assert json.dumps(scrub.spec(*layout([once], own))) == json.dumps(scrub.spec(*layout([thrice], own)))


def test_a_long_texts_rows_of_the_querys_word_stay_in_its_spec():
    """Where the row axis skips labels, the query's word keeps its own: those rows are part of the spec."""
    once, twice = (Panel(None, LONG, LONG, "weights", kept_rows=rows) for rows in [(1,), (1, 7)])
    standing = stand_ins(*once.label_lists())
    assert layout([once], standing) != layout([twice], standing)


def grid_arguments(tokens: tuple[str, ...]) -> tuple:
    """grid.spec's arguments as views/heads.py makes them: 12 heads of 6 layers summed up, no tokens beside them."""
    layout = grid.grid_layout(700, len(tokens), False, READING, 1, 0)
    return 6, 12, True, True, tokens, False, layout, 420, None, READING, "token"


def test_the_all_heads_grid_given_its_labels_is_the_chart_built_on_them():
    """As views/heads.py draws it: one spec for every text of its length, its summary's labels the datasets."""
    standing = stand_ins(HOSTILE)
    own = json.dumps(grid.spec(*grid_arguments(HOSTILE)))
    given = with_labels(grid.spec(*grid_arguments(standing[HOSTILE])), standing)
    assert same_names(json.dumps(inlined(*given)), standing) == same_names(own, {})
    other = stand_ins(OTHER)
    assert json.dumps(with_labels(grid.spec(*grid_arguments(other[OTHER])), other)[0]) == json.dumps(given[0])


def test_a_title_is_data_a_new_one_of_as_many_lines_keeps_the_spec_and_names_the_chart_as_before():
    """A control that changes only a heatmap's title (weighting by value norm, the sinks left out) leaves its spec
    as it was: the browser swaps the title's lines in, and builds no chart anew. What the chart is (about) names it."""
    plain, weighted = (Panel(None, OTHER, OTHER, title, about="Attention weights")
                       for title in ("Attention weights", "Attention weights × ‖f(x)‖, rows renormalised"))
    assert len(plain.title_lines()) == len(weighted.title_lines()) == 1
    drawings = [with_labels(scrub.spec(*layout([shown], stand_ins(*shown.label_lists()))),
                            stand_ins(*shown.label_lists())) for shown in (plain, weighted)]
    (first, first_labels), (second, second_labels) = drawings
    assert json.dumps(first) == json.dumps(second)
    assert [list(frame[LABEL]) for frame in second_labels.values() if len(frame) == 1] == [
        ["Attention weights × ‖f(x)‖, rows renormalised"]]
    assert first["description"] == second["description"] == "Attention weights"
