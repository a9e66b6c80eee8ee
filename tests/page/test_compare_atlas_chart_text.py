"""The compare view's by-query bars and the head atlas's two charts say what they draw to a screen reader
(charts/chart_summaries.describe_changes, charts/atlas.describe_grid and describe_plane, written by scrubbed.said):
each query's largest change as transformers' weights give it, the atlas's labels and largest glyphs as Clark et al.'s
numbers of transformers' weights give them, the plane's closest heads as the core places them; and each follows a
move: the compare chart's layer and head, its sinks toggle, and the atlas's text."""

from __future__ import annotations

import numpy as np
import pytest

from attention.analyses import atlas
from attention.analyses.compare import aligned_positions
from components.charts.spoken_numbers import figure, signed
from harness.reference import bare_forward, transformers_tokenizer
from tests.pages import TEXT, assert_healthy, chart_texts, open_page, pick_on_chart

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TEXT_A = "the animal didn't cross the street because it was too tired"
TEXT_B = "the animal didn't cross the street because it was too wide"
BY_QUERY = "Each query token's largest change, A − B, "


def said_starting(page, start: str) -> str:
    [found] = [text for text in chart_texts(page) if text.startswith(start)]
    return found


def tokens_of(bundled, text: str) -> list[str]:
    tokenizer = transformers_tokenizer(bundled)
    return tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"])


def expected_by_query(bundled, layer: int, head: int, count_sinks: bool) -> str:
    """What the by-query bars say, from transformers' weights of both texts: each aligned query's largest |A − B|
    over the aligned keys (the sinks left out unless counted), the three largest."""
    tokens_a, tokens_b = tokens_of(bundled, TEXT_A), tokens_of(bundled, TEXT_B)
    weights_a = bare_forward(bundled, TEXT_A)().attentions[layer][0, head].numpy()  # (T_a, T_a)
    weights_b = bare_forward(bundled, TEXT_B)().attentions[layer][0, head].numpy()  # (T_b, T_b)
    positions_a, positions_b = aligned_positions(tokens_a, tokens_b)  # (K,) each
    kept = [k for k, position in enumerate(positions_a)
            if count_sinks or tokens_a[position] not in ("[CLS]", "[SEP]")]
    bars = []
    for row in kept:
        changes = [weights_a[positions_a[row], positions_a[column]] - weights_b[positions_b[row], positions_b[column]]
                   for column in kept]
        column = kept[int(np.argmax(np.abs(changes)))]
        (query_a, key_a), (query_b, key_b) = (positions_a[[row, column]], positions_b[[row, column]])
        bars.append((tokens_a[query_a], tokens_a[key_a], weights_a[query_a, key_a], weights_b[query_b, key_b]))
    largest = sorted(bars, key=lambda bar: -abs(bar[2] - bar[3]))[:3]
    cells = "; ".join(f"{query!r} → {key!r} {signed(a - b)} (A {figure(a)}, B {figure(b)})"
                      for query, key, a, b in largest)
    return f"{BY_QUERY}{len(kept)} query tokens. Largest: {cells}."


def test_the_by_query_bars_say_transformers_largest_changes_and_follow_the_head_and_the_sinks(bundled):
    page = open_page(view="compare", text=TEXT_A, text_b=TEXT_B, layer="2", head="5")
    assert_healthy(page)
    assert said_starting(page, BY_QUERY) == expected_by_query(bundled, 2, 5, count_sinks=False)
    page = pick_on_chart(page, "chart-compare", layer=4, head=1)
    assert_healthy(page)
    assert said_starting(page, BY_QUERY) == expected_by_query(bundled, 4, 1, count_sinks=False)
    page.toggle(key="compare_special").set_value(True).run()
    assert_healthy(page)
    assert said_starting(page, BY_QUERY) == expected_by_query(bundled, 4, 1, count_sinks=True)


def clark_scores(bundled, text: str) -> np.ndarray:
    """(L, nh, len(atlas.COLUMNS)): Clark et al.'s numbers of every head, from transformers' weights of a text with
    no punctuation (punct 0): the diagonals' and the sinks' shares over the T queries, each row's entropy ÷ ln T."""
    attentions = np.stack([layer[0].numpy() for layer in bare_forward(bundled, text)().attentions])  # (L, nh, T, T)
    tokens = attentions.shape[-1]
    entropy = -(attentions * np.log(np.clip(attentions, 1e-30, None))).sum(axis=-1) / np.log(tokens)  # (L, nh, T)
    scores = {"previous": np.trace(attentions, -1, -2, -1), "next": np.trace(attentions, 1, -2, -1),
              "self": np.trace(attentions, 0, -2, -1), "cls": attentions[..., 0].sum(-1),
              "sep": attentions[..., -1].sum(-1), "punct": np.zeros(attentions.shape[:2])}
    return np.stack([*(scores[name] / tokens for name in atlas.BEHAVIOURS), entropy.mean(-1)], axis=-1)


def expected_grid(bundled, text: str) -> str:
    scores = clark_scores(bundled, text)
    heads = [(layer, head, atlas.label(scores[layer, head]), atlas.strength(scores[layer, head]))
             for layer in range(scores.shape[0]) for head in range(scores.shape[1])]
    names = {"previous": "previous token", "next": "next token", "self": "itself", "cls": "[CLS]", "sep": "[SEP]",
             "punct": "punctuation", "broad": "broad", "mixed": "mixed"}
    labels = [label for _, _, label, _ in heads]
    tally = ", ".join(f"{labels.count(label)} {names[label]}" for label in atlas.LABELS if label in labels)
    largest = sorted(heads, key=lambda head: -head[3])[:3]
    glyphs = "; ".join(f"layer {layer}, head {head}, {names[label]} {figure(share)}"
                       for layer, head, label, share in largest)
    return (f"The head atlas, {scores.shape[0]} layers × {scores.shape[1]} heads, a glyph each coloured by its label: "
            f"{tally}. Largest glyphs: {glyphs}.")


def expected_plane(bundled, text: str) -> str:
    """The plane's closest and farthest heads, as the core places them (attention.analyses.atlas's MDS)."""
    places = atlas.head_atlas(bundled, [(text, None)]).plane()  # (H, 2)
    apart = {(i, j): float(np.linalg.norm(places[i] - places[j]))
             for i in range(len(places)) for j in range(i + 1, len(places))}
    ranked = sorted(apart, key=apart.get)

    def named(index: int) -> str:
        return f"layer {index // 12}, head {index % 12}"

    closest = "; ".join(f"{named(i)} and {named(j)}" for i, j in ranked[:2])
    return (f"Heads that attend alike: {len(places)} heads on a plane, coloured by layer, closer where they attend "
            f"more alike. Closest: {closest}. Farthest apart: {named(ranked[-1][0])} and {named(ranked[-1][1])}.")


def test_the_atlas_says_its_labels_largest_glyphs_and_closest_heads_and_follows_the_text(bundled):
    page = open_page(view="atlas", atlas="text", text=TEXT)
    assert_healthy(page)
    assert said_starting(page, "The head atlas, ") == expected_grid(bundled, TEXT)
    assert said_starting(page, "Heads that attend alike: ") == expected_plane(bundled, TEXT)
    other = "fruit flies like a banana"
    page.text_area(key="text").set_value(other).run()
    assert_healthy(page)
    assert said_starting(page, "The head atlas, ") == expected_grid(bundled, other)
    assert said_starting(page, "Heads that attend alike: ") == expected_plane(bundled, other)
