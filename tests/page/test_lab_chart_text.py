"""The scaling lab's four charts each say what they draw to a screen reader (components/charts/lab_text.py, written
by views/parts/scrubbed.said): the numbers named are the core's, computed here afresh (attention.labs.scaling_lab
on the bundled model's trace), and each text follows a move of τ on the random-softmax chart's own input, and of
the query and the layer beside the view."""

from __future__ import annotations

import math

import pytest

from attention.dissect.trace import build_trace
from attention.labs.scaling_lab import (
    head_softmax_statistics,
    random_softmax_statistics,
    temperature_row,
    variance_by_head_size,
)
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from tests.pages import TEXT, assert_healthy, chart_texts, open_page, pick_on_chart

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

HEAD_SIZES = [2**power for power in range(10)]
SCALINGS = ("none", "sqrt", "linear", "temperature")
RANDOM_ROWS = 1_024  # the lab's rows of random scores for a 7-token text (views/lab.random_rows)


def said_of(page, start: str) -> str:
    [text] = [text for text in chart_texts(page) if text.startswith(start)]
    return text


def two_figures(value: float) -> str:
    return f"{float(f'{value:.2g}'):g}"


@pytest.fixture(scope="module")
def lab():
    page = open_page(view="lab", layer="2", head="5")
    assert_healthy(page)
    return page


def test_each_of_the_four_charts_says_something(lab):
    said = chart_texts(lab)
    assert [text.split(":")[0] for text in said] == [
        "The spread of q·k", "Softmax over 7 random keys", "The trained heads of layer 2 (d_k = 32), averaged over "
        "the heads", "One row's weights, layer 2, head 5, query 'time', at 7 temperatures"], said
    assert all(len(text) <= 300 for text in said), [len(text) for text in said]


def test_the_variance_charts_text_is_the_cores_measure(lab):
    measured = variance_by_head_size(HEAD_SIZES, ("none", "sqrt", "linear"), 20_000)
    none, root, linear = measured["none"], measured["sqrt"], measured["linear"]
    assert said_of(lab, "The spread of q·k") == (
        f"The spread of q·k: unscaled, its variance grows from {two_figures(none[0])} at d_k = 1 to "
        f"{two_figures(none[-1])} at d_k = 512, as the theory line d_k does; divided by √d_k it stays between "
        f"{two_figures(root.min())} and {two_figures(root.max())}; divided by d_k it falls to "
        f"{two_figures(linear[-1])}.")
    assert two_figures(none[-1]) == "510" and two_figures(linear[-1]) == "0.002"


def random_said(tau: float) -> str:
    numbers = random_softmax_statistics(HEAD_SIZES, 7, SCALINGS, temperature=tau, rows=RANDOM_ROWS)
    none, root = numbers["none"], numbers["sqrt"]["entropy"]
    fixed = numbers["temperature"]["entropy"]
    return (f"Softmax over 7 random keys: unscaled, the mean entropy falls from {none['entropy'][0]:.2f} to "
            f"{none['entropy'][-1]:.2f} nats as d_k grows from 1 to 512, the largest weight reaching "
            f"{none['max_weight'][-1]:.2f}; with √d_k it stays between {root.min():.2f} and {root.max():.2f}; with "
            f"d_k it ends at {numbers['linear']['entropy'][-1]:.2f} (uniform: {math.log(7):.2f}); with τ = {tau:g}, "
            f"from {fixed[0]:.2f} to {fixed[-1]:.2f}.")


def trained_said(bundled, layer: int, tau: float) -> str:
    trace = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=layer))
    numbers = head_softmax_statistics(trace["Q split"][0], trace["K split"][0], SCALINGS, temperature=tau)
    words = ("unscaled", "with √d_k", "with d_k", f"with τ = {tau:g}")
    entropy = ", ".join(f"{numbers[s]['entropy'].mean():.2f} {word}" for s, word in zip(SCALINGS, words, strict=True))
    largest = ", ".join(f"{numbers[s]['max_weight'].mean():.2f}" for s in SCALINGS)
    return (f"The trained heads of layer {layer} (d_k = 32), averaged over the heads: mean entropy {entropy} (uniform: "
            f"{math.log(7):.2f}); mean largest weight {largest}, in that order.")


def test_a_move_of_tau_on_the_chart_moves_the_random_and_the_trained_heads_texts_with_it(bundled):
    page = open_page(view="lab", layer="2")
    assert said_of(page, "Softmax over") == random_said(1.0)
    assert said_of(page, "The trained heads") == trained_said(bundled, 2, 1.0)
    pick_on_chart(page, "chart-random-softmax", temperature=4.5)
    assert_healthy(page)
    assert said_of(page, "Softmax over") == random_said(4.5)
    assert said_of(page, "The trained heads") == trained_said(bundled, 2, 4.5)
    assert random_said(4.5) != random_said(1.0)


def test_the_trained_heads_text_follows_the_layer(bundled):
    page = open_page(view="lab", layer="2")
    page.slider(key="layer").set_value(4).run()
    assert_healthy(page)
    assert said_of(page, "The trained heads") == trained_said(bundled, 4, 1.0)


def test_the_temperature_charts_text_names_the_rows_largest_weights_and_follows_the_query(bundled):
    page = open_page(view="lab", layer="2", head="5")
    tokens = list(encode(bundled, TEXT).tokens[0])
    scores = build_trace(bundled, encode(bundled, TEXT), TraceSettings(layer=2, head=5))["scores"][0]  # (T, T)
    taus = sorted({0.5, 1.0, 2.0, 4.0, 8.0, 16.0, round(32**0.5, 2)})

    def expected(query: int) -> str:
        weights = temperature_row(scores[query], taus)  # (τs, T)
        low, high = int(weights[0].argmax()), int(weights[-1].argmax())
        return (f"One row's weights, layer 2, head 5, query {tokens[query]!r}, at 7 temperatures: at τ = 0.5 the "
                f"largest is {weights[0, low]:.2f}, on {tokens[low]!r}; at τ = 16 it is {weights[-1, high]:.2f}, on "
                f"{tokens[high]!r}, towards the uniform {1 / 7:.2f}.")

    assert said_of(page, "One row's weights") == expected(1)
    page.selectbox(key="query").set_value(4).run()
    assert_healthy(page)
    assert said_of(page, "One row's weights") == expected(4) != expected(1)
