"""A heatmap's numbers as a table (views/parts/number_table.py), on the page: off until its toggle is switched on,
then the numbers of the head the chart stands at, as transformers has them, a row per query token; masked cells
read "masked"; the table follows a move of the chart's own inputs; a long text's rows name their largest cells."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pytest

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from components.views.parts.number_table import DECIMALS
from harness.reference import bare_forward, transformers_tokenizer
from tests.pages import TEXT, assert_healthy, chart_texts, open_page, pick_on_chart

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

LONG_TEXT = " ".join(["the cat sat on the mat and looked at the dog"] * 5)  # 57 tokens: past a full table's columns


class _Table(HTMLParser):
    """One table's caption, header row, and rows as (row header, cells)."""

    def __init__(self) -> None:
        super().__init__()
        self.caption, self.header, self.rows = "", [], []
        self._text: list[str] | None = None
        self._in_body = False

    def handle_starttag(self, tag, attrs):
        if tag == "tbody":
            self._in_body = True
        if tag == "tr" and self._in_body:
            self.rows.append([])
        if tag in ("th", "td", "caption"):
            self._text = []

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag in ("th", "td", "caption") and self._text is not None:
            text = "".join(self._text)
            if tag == "caption":
                self.caption = text
            else:
                (self.rows[-1] if self._in_body else self.header).append(text)
            self._text = None


def number_tables(page) -> list[_Table]:
    tables = []
    for element in page.get("html"):
        if 'data-testid="aa-number-table"' in element.proto.body:
            reader = _Table()
            reader.feed(element.proto.body)
            tables.append(reader)
    return tables


# A number shown to DECIMALS decimals is within half its last decimal of the page's own, itself within float32's
# rounding (another CPU sums in another order) of transformers'.
SHOWN = 0.5 * 10.0**-DECIMALS + 1e-5


def as_numbers(table: _Table) -> np.ndarray:
    """The table's cells (R, K) as numbers, NaN where a cell reads masked."""
    return np.asarray([[np.nan if cell == "masked" else float(cell) for cell in row[1:]] for row in table.rows])


def tokens_of(bundled, text: str = TEXT) -> list[str]:
    tokenizer = transformers_tokenizer(bundled)
    return tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"])


def opened_table(page, key: str = "table_chart-weights"):
    page.toggle(key=key).set_value(True).run()
    assert_healthy(page)
    return page


def test_the_table_is_off_until_asked_then_holds_transformers_weights_and_follows_a_move(bundled):
    page = open_page(text=TEXT, layer="2", head="5")
    assert_healthy(page)
    assert page.toggle(key="table_chart-weights").value is False
    assert not number_tables(page), "nothing is drawn, nor computed, until the reader asks"

    [table] = number_tables(opened_table(page))
    tokens = tokens_of(bundled)
    assert table.caption.startswith("Attention weights, layer 2, head 5. Rows: query tokens; columns: key tokens.")
    assert table.header == ["query token \\ key token", *tokens]
    assert [row[0] for row in table.rows] == tokens
    weights = bare_forward(bundled, TEXT)().attentions  # per layer (1, nh, T, T)
    np.testing.assert_allclose(as_numbers(table), weights[2][0, 5].numpy(), atol=SHOWN, rtol=0)

    page = pick_on_chart(page, "chart-weights", layer=4, head=0)
    [table] = number_tables(page)
    assert table.caption.startswith("Attention weights, layer 4, head 0.")
    np.testing.assert_allclose(as_numbers(table), weights[4][0, 0].numpy(), atol=SHOWN, rtol=0)


def test_masked_cells_read_masked_and_the_rest_are_the_cores_masked_scores(bundled):
    page = open_page(text=TEXT, layer="2", head="5", mask="causal", head_stage="masked")
    [table] = number_tables(opened_table(page, "table_chart-masked"))
    shown = as_numbers(table)
    above = np.triu(np.ones(shown.shape, dtype=bool), 1)  # the keys after each query
    assert np.isnan(shown[above]).all() and not np.isnan(shown[~above]).any()
    masked = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=2, head=5, mask="causal"))["masked"][0]
    np.testing.assert_allclose(shown[~above], masked[~above], atol=SHOWN, rtol=0)


def test_the_compare_view_has_a_table_a_panel():
    page = open_page(view="compare", text=TEXT, text_b="fruit flies like a banana")
    tables = number_tables(opened_table(page, "table_chart-compare"))
    assert len(tables) == 3 and all(", layer 0, head 0." in table.caption for table in tables)


def test_a_long_texts_rows_name_their_largest_weights(bundled):
    page = open_page(text=LONG_TEXT, layer="1", head="3")
    [table] = number_tables(opened_table(page))
    tokens = tokens_of(bundled, LONG_TEXT)
    assert table.header == ["query token", "largest 1", "largest 2", "largest 3", "largest 4", "largest 5"]
    assert len(table.rows) == len(tokens) == 57
    weights = bare_forward(bundled, LONG_TEXT)().attentions[1][0, 3].numpy()  # (T, T)
    for query in (0, 9, 56):
        largest = np.argsort(-weights[query], kind="stable")[:5]
        named = [cell.rsplit(" ", 1) for cell in table.rows[query][1:]]
        np.testing.assert_allclose([float(value) for _, value in named], weights[query, largest], atol=SHOWN)
        apart = np.diff(weights[query, largest]) < -1e-4  # no two so close that float32 may order them either way
        if apart.all():
            assert [key for key, _ in named] == [repr(tokens[key]) for key in largest]


def test_the_lines_say_their_largest_weights_and_have_a_table_that_follows_a_move(bundled):
    page = open_page(text=TEXT, layer="2", head="5", head_stage="lines")
    assert_healthy(page)
    tokens = tokens_of(bundled)
    weights = bare_forward(bundled, TEXT)().attentions

    def largest(layer: int, head: int) -> str:  # the three largest weights as the chart's text names them
        matrix = weights[layer][0, head].numpy()
        order = np.argsort(-matrix, axis=None, kind="stable")[:3]
        return "; ".join(f"{tokens[i // len(tokens)]!r} → {tokens[i % len(tokens)]!r} {matrix.flat[i]:.2f}"
                         for i in order)

    [said] = chart_texts(page)
    assert said == f"Attention weights as lines, layer 2, head 5: 7 query rows × 7 columns. Largest: {largest(2, 5)}."
    [table] = number_tables(opened_table(page, "table_chart-lines"))
    np.testing.assert_allclose(as_numbers(table), weights[2][0, 5].numpy(), atol=SHOWN, rtol=0)

    page = pick_on_chart(page, "chart-lines", layer=4, head=0)
    [said] = chart_texts(page)
    assert said.startswith("Attention weights as lines, layer 4, head 0:") and said.endswith(f"{largest(4, 0)}.")
    [table] = number_tables(page)
    np.testing.assert_allclose(as_numbers(table), weights[4][0, 0].numpy(), atol=SHOWN, rtol=0)


def test_the_neuron_views_table_holds_its_querys_numbers_with_each_key_and_none_for_a_hidden_key(bundled):
    page = open_page({"view": "neuron", "text": TEXT, "layer": "1", "head": "3", "query": "2", "mask": "causal"})
    assert_healthy(page)
    [table] = number_tables(opened_table(page, "table_chart-neuron"))
    tokens = tokens_of(bundled)
    assert table.header == ["key token \\ number", "q · k", "scaled", "weight"]
    assert [row[0] for row in table.rows] == [f"{j}: {token}" for j, token in enumerate(tokens)]
    shown = as_numbers(table)  # (T, 3)
    assert np.isnan(shown[3:]).all() and not np.isnan(shown[:3]).any(), "keys after the query are masked"
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=1, head=3, mask="causal"))
    np.testing.assert_allclose(shown[:3, 0], trace["scores"][0, 2, :3], atol=SHOWN, rtol=0)
    np.testing.assert_allclose(shown[:3, 1], trace["scaled"][0, 2, :3], atol=SHOWN, rtol=0)
    np.testing.assert_allclose(shown[:3, 2], trace["weights"][0, 2, :3], atol=SHOWN, rtol=0)


def test_the_neuron_views_weights_are_transformers_own(bundled):
    page = open_page({"view": "neuron", "text": TEXT, "layer": "1", "head": "3", "query": "2"})
    [table] = number_tables(opened_table(page, "table_chart-neuron"))
    weights = bare_forward(bundled, TEXT)().attentions[1][0, 3, 2].numpy()  # (T,)
    np.testing.assert_allclose(as_numbers(table)[:, 2], weights, atol=SHOWN, rtol=0)




def test_a_token_is_text_in_the_table_never_markup():
    from components.views.parts.number_table import table_html

    hostile = ["<b>it</b>", "<script>alert(1)</script>", '"rains"', "${x}", "**bold**"]
    body = table_html(np.eye(5), hostile, hostile, caption="<i>caption</i>")
    assert "<b>" not in body and "<script>" not in body and "<i>" not in body
    reader = _Table()
    reader.feed(body)
    assert reader.caption.startswith("<i>caption</i>")
    assert reader.header[1:] == hostile and [row[0] for row in reader.rows] == hostile
