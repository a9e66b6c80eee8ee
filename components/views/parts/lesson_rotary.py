"""The guided lesson's two steps of a model whose heads are a Llama's: q and k turned by position (RoPE, Su et al.
2021), so that the scores see distances only; and query heads that share fewer key and value heads (grouped-query
attention, Ainslie et al. 2023). Shown only on a model that does these (components/page/lesson_steps.py), each on
the student's own text, every number read off the trained trace or computed with the model's own rotation.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention.analyses.lesson import by_distance, diagonal_spread, shared_by
from components.caches import lesson_extras
from components.charts.chart_summaries import describe_map
from components.views.parts.lesson_kit import (
    explain,
    formula,
    heatmap_in,
    numbers,
    points,
    shapes_table,
    step_number,
    trained,
    two_heatmaps,
)

ANGLES = "RoPE angles"  # the trace's (T, d/2) angle of each pair at each position
MAPPING = "shared head of each query head"  # the trace's (nh,) key/value head of each query head
MAP_PX = 360  # the map of shared heads: a few heads each way, drawn the view's width its cells were a hand wide


def rotary_step(context) -> None:
    trace, head = trained(context)
    tokens = list(trace.tokens[0])
    last, size = len(tokens) - 1, trace.head_size
    shared = int(trace[MAPPING][head]) if MAPPING in trace.names else head  # the K head this query head reads
    st.latex(r"\begin{gathered} x'_i = x_i \cos p\theta_i - x_{i+d/2} \sin p\theta_i, \\ x'_{i+d/2} = x_i \sin "
             r"p\theta_i + x_{i+d/2} \cos p\theta_i, \\ \theta_i = b^{-2i/d} \end{gathered}")  # one under the other
    angles = trace[ANGLES]  # (T, d/2)
    heatmap_in(context, angles, tokens, numbers(size // 2), "Angle p·θ_i of each pair at each position (radians)",
               "rotary-angles", row_title="position (token)", column_title="pair i")
    before, after = trace["Q split"][0, head, last], trace["Q rotated"][0, head, last]  # (d,) each
    # The head and the tokens are said over each chart (where), not in its title: a title that named them would
    # change the chart's spec at every head or text, and the browser would build the chart anew
    heatmap_in(context, np.stack([before, after]), ["q before the turn", "q after the turn"], numbers(size),
               "Query of the last token: before and after its turn", "rotary-query", row_title="",
               column_title="dimension of the head", scheme="redblue",
               where=f"head {head}, token {last} ({tokens[last]})")
    weights = trace["weights"][0]  # (T, T)
    key = int(weights[last].argmax())  # the key the last query weighs most
    placed = lesson_extras.placed_scores(context.model_name, trace["Q split"][0, head, last],
                                         trace["K split"][0, shared, key], len(tokens))  # (T, T)
    heatmap_in(context, placed, numbers(len(tokens)), numbers(len(tokens)),
               "The same q and k placed at every pair of positions: q_p · k_p'", "rotary-placed",
               row_title="query position p", column_title="key position p'", scheme="redblue", download=True,
               where=f"head {head}, q of token {last} and k of token {key}")
    shapes_table(trace, ["Q split", "K split", ANGLES, "Q rotated", "K rotated"])
    explain(*_turn_sentences(context, trace, head, angles, before, after))
    points(*_distance_sentences(trace, last, key, placed))


def _turn_sentences(context, trace, head: int, angles: np.ndarray, before: np.ndarray,
                    after: np.ndarray) -> list[str]:
    """How fast each pair turns and that a turn keeps a vector's length, every number off the trace."""
    pairs, last = angles.shape[1], angles.shape[0] - 1
    sentences = [f"{context.family.label} adds no position's vector to its token embeddings (as BERT and GPT-2 do "
                 f"in step 1): it turns each head's q and k instead, cut into d/2 = {pairs} pairs of numbers."]
    if last:
        sentences.append(f"Pair 0 turns by {angles[1, 0]:.3g} rad a position and pair {pairs - 1} by "
                         f"{angles[1, -1]:.3g}: at the last position, {last}, pair 0 has turned {angles[last, 0]:.3g} "
                         f"rad and pair {pairs - 1} {angles[last, -1]:.3g}. Low pairs turn fast, high pairs slowly.")
    sentences.append(f"A turn keeps a vector's length: head {head}'s q of the last token is "
                     f"{np.linalg.norm(before):.4g} long before the turn and {np.linalg.norm(after):.4g} after.")
    return sentences


def _distance_sentences(trace, last: int, key: int, placed: np.ndarray) -> list[str]:
    """What the placed scores show: one number a diagonal, the head's own score among them."""
    spread, scores = diagonal_spread(placed), trace["scores"][0]  # (T, T) the head's raw q·k
    distances = by_distance(placed)  # (T,)
    found = [f"Along every diagonal of the map (the same distance p − p') the scores differ by at most {spread:.1e}, "
             "float32's rounding: the score sees how far apart two tokens are, not where they stand."]
    if len(distances) > 1:
        found.append(f"From one distance to the next they change: {distances[0]:.3g} at distance 0, "
                     f"{distances[1]:.3g} at 1, {distances[-1]:.3g} at {len(distances) - 1}.")
    found.append(f"Cell ({last}, {key}) is the head's own raw score of token {last} for key {key}, "
                 f"{placed[last, key]:.4g} (the trace's: {scores[last, key]:.4g}); above the diagonal are the "
                 "places the causal mask hides, shown as if it did not.")
    return found


def shared_step(context) -> None:
    trace, head = trained(context)
    tokens = list(trace.tokens[0])
    mapping = trace[MAPPING].astype(int)  # (nh,)
    query_heads, kv_heads = trace["Q split"].shape[1], trace["K split"].shape[1]
    group = query_heads // kv_heads
    formula(context, r"K_h = K^{\text{shared}}_{\lfloor h / g \rfloor}, \quad V_h = V^{\text{shared}}_{\lfloor h / g "
            r"\rfloor},", rf"g = n_h / n_{{kv}} = {query_heads} / {kv_heads} = {group}", between=r"\quad")
    map_title, readers = "Which key/value head each query head reads (1: reads it)", shared_by(mapping, kv_heads)
    heatmap_in(context, readers, numbers(query_heads), numbers(kv_heads), map_title, "shared-map",
               row_title="query head", column_title="key/value head", width=min(context.width, MAP_PX),
               text=describe_map(map_title, readers, numbers(query_heads), numbers(kv_heads), "query head",
                                 "key/value head", "read"))
    shared = int(mapping[head])
    start = shared * group
    sibling = start + (head - start + 1) % group  # the next head of the same group
    other = context.trace(source="bert", head=sibling)
    left, right, width = two_heatmaps(context, len(tokens))
    with left:
        heatmap_in(context, trace["weights"][0], tokens, tokens, "Weights of the head chosen", "shared-weights",
                   width=width, download=True, where=f"head {head} (K/V head {shared})")
    with right:
        heatmap_in(context, other["weights"][0], tokens, tokens, "Weights of the next head of its group",
                   "shared-sibling", width=width, where=f"head {sibling} (K/V head {shared})")
    shapes_table(trace, ["Q split", "K split", "V split", MAPPING, "K repeated", "V repeated", "K", "V"])
    which, *found = _shared_sentences(context, trace, head, sibling, other, mapping, kv_heads)
    explain(which)
    points(*found)


def _shared_sentences(context, trace, head: int, sibling: int, other, mapping: np.ndarray,
                      kv_heads: int) -> list[str]:
    """Which heads share, that a shared K is a copy, what the sharing heads still do apart and what it saves."""
    query_heads, size = len(mapping), trace.head_size
    readers = "; ".join(f"query heads {', '.join(map(str, np.flatnonzero(mapping == each)))} read {each}"
                        for each in range(kv_heads))
    rotated = "K rotated" if "K rotated" in trace.names else "K split"
    copied = float(np.abs(trace["K repeated"][0, head] - trace[rotated][0, mapping[head]]).max())
    apart = float(np.abs(trace["weights"][0] - other["weights"][0]).max())
    return [f"Q is cut into nh = {query_heads} heads, K and V into n_kv = {kv_heads}: {readers}.",
            f"K repeated's head {head} is {rotated}'s head {mapping[head]}, copied (largest difference {copied:g}), "
            f"and so is V's: heads {head} and {sibling} read the same keys and values.",
            f"Their queries are their own, so they still look at different keys: their weights differ by up to "
            f"{apart:.3g}.",
            f"What it saves: a decoder keeps every token's K and V for the tokens to come (the key/value cache), "
            f"2 · n_kv · d = {2 * kv_heads * size} numbers a token and a layer instead of 2 · nh · d = "
            f"{2 * query_heads * size}, {kv_heads / query_heads:.0%} of them.",
            f"From step {step_number(context, 'mask')} on, each query head reads its K and V from K repeated and V "
            "repeated, one head of each per query head, as a model without sharing does."]
