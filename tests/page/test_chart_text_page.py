"""The one-head chart's text alternative on the page (views/parts/scrubbed.chart_text): the cells it names are the
largest of transformers' own weights for the layer and head the chart stands at, in order and to two decimals, and
it follows a move of the chart's own inputs. The compare view says one paragraph a panel, the neuron view its
query's largest weights, the all-heads grid the heads of its layer's largest weights."""

from __future__ import annotations

import numpy as np
import pytest

from harness.reference import bare_forward, transformers_tokenizer
from tests.pages import TEXT, assert_healthy, chart_texts, open_page, pick_on_chart

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def expected_cells(bundled, layer: int, head: int) -> list[str]:
    """'row' → 'column' 0.41 for the three largest of transformers' weights of the layer and head, largest first."""
    weights = bare_forward(bundled, TEXT)().attentions[layer][0, head].numpy()  # (T, T)
    tokens = transformers_tokenizer(bundled).convert_ids_to_tokens(transformers_tokenizer(bundled)(TEXT)["input_ids"])
    order = np.argsort(-weights, axis=None, kind="stable")[:3]
    return [f"{tokens[i // len(tokens)]!r} → {tokens[i % len(tokens)]!r} {weights.flat[i]:.2f}" for i in order]


def test_the_one_head_charts_text_names_transformers_largest_weights_and_follows_a_move(bundled):
    page = open_page(text=TEXT, layer="2", head="5")
    assert_healthy(page)
    [said] = chart_texts(page)
    assert said.startswith("Attention weights, layer 2, head 5: 7 query rows × 7 columns. Largest: ")
    assert said.endswith("; ".join(expected_cells(bundled, 2, 5)) + ".")

    page = pick_on_chart(page, "chart-weights", layer=4, head=0)
    [said] = chart_texts(page)
    assert said.startswith("Attention weights, layer 4, head 0:")
    assert said.endswith("; ".join(expected_cells(bundled, 4, 0)) + ".")


def test_the_compare_view_says_each_panel():
    page = open_page(view="compare", text=TEXT, text_b="fruit flies like a banana")
    assert_healthy(page)
    said = [text for text in chart_texts(page) if not text.startswith("Each query token's largest change")]
    assert len(said) == 3 and all(", layer 0, head 0: " in text for text in said), said


def test_the_neuron_views_text_names_the_querys_largest_weights_as_transformers_has_them(bundled):
    page = open_page({"view": "neuron", "text": TEXT, "layer": "1", "head": "3", "query": "2"})
    assert_healthy(page)
    [said] = chart_texts(page)
    weights = bare_forward(bundled, TEXT)().attentions[1][0, 3, 2].numpy()  # (T,)
    tokens = transformers_tokenizer(bundled).convert_ids_to_tokens(transformers_tokenizer(bundled)(TEXT)["input_ids"])
    largest = np.argsort(-weights, kind="stable")[:3]
    assert said.startswith(f"The neuron view, layer 1, head 3, query '2: {tokens[2]}': its weights over 7 keys. ")
    assert said.endswith("; ".join(f"'{j}: {tokens[j]}' {weights[j]:.2f}" for j in largest) + ".")


def test_the_all_heads_grid_names_the_heads_of_the_layers_largest_weights_as_transformers_has_them(bundled):
    page = open_page(view="heads", text=TEXT, layer="3")
    assert_healthy(page)
    said = [text for text in chart_texts(page) if text.startswith("Every head of layer 3, 12 heads over 7 tokens.")]
    assert len(said) == 1, chart_texts(page)
    weights = bare_forward(bundled, TEXT)().attentions[3][0].numpy()  # (nh, T, T)
    tokens = transformers_tokenizer(bundled).convert_ids_to_tokens(transformers_tokenizer(bundled)(TEXT)["input_ids"])
    heads = np.argsort(-weights.reshape(len(weights), -1).max(axis=1), kind="stable")[:3]
    named = []
    for head in heads:
        row, column = divmod(int(weights[head].argmax()), len(tokens))
        named.append(f"head {head}, {tokens[row]!r} → {tokens[column]!r} {weights[head, row, column]:.2f}")
    assert said[0].endswith("; ".join(named) + ".")
