"""The one-head view's Rotation stage, for a head whose q and k turn by position (RoPE, Su et al. 2021): one pair of a
query's and a key's numbers before and after the turn, on the circle it walks; the scores when the whole text moves
along by Δ positions; the score against distance. Offered only where the head turns (stages); every number is the
core's (attention/dissect/rotary_views.py, held to transformers' apply_rotary_pos_emb), asked of
components/caches/rotary.py.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from attention.dissect.rotary_views import MAX_SHIFT
from components.caches import rotary
from components.charts.draw import lettered
from components.charts.rotary import decay_chart, describe_decay, describe_pair, pair_chart
from components.page.page_state import HEAD_STAGES
from components.views.parts.scrubbed import said

ROTATION = HEAD_STAGES["rotation"]  # the stage's name and its button's label
DEFAULT_SHIFT = 100
PAIR_CHART_PX = 460  # px the pair's chart takes at most, its axes and title with it (charts/rotary.py)
WORDS_BESIDE_PX = 280  # px its reading needs beside it; with less, it goes under the chart
SHORT_RATIO = 4  # k's pair this many times shorter than q's (or more): the caption points to Directions only


def stages(outline) -> tuple[str, ...]:
    """The stage this part adds to the one-head view's row: Rotation where the head turns by position, else none
    (BERT's and GPT-2's row stays as it is)."""
    return (ROTATION,) if "Q rotated" in outline.names else ()


def render(context, outline) -> None:
    tokens = list(outline.tokens[0])
    size = outline.head_size
    arguments = (context.model_name, context.text, context.text_b, context.settings())
    st.markdown(f"**How {context.family.label} tells positions apart.** It adds no position to its tokens (BERT and "
                f"GPT-2 do): just before the scores it turns each head's q and k by their token's position. The "
                f"head's {size} numbers go two by two, number i with number i + {size // 2}, and each pair turns like "
                "a clock hand, θ_i radians a position: the first pairs fast, the last slowly.")
    query_column, key_column, pair_column = st.columns(3)
    with query_column:
        query = _token_select("Query token (its q)", tokens, min(context.state.query, len(tokens) - 1), "rotary_query")
    with key_column:
        key = _token_select("Key token (its k)", tokens, 0, "rotary_key",
                            help=f"Starts at the first token, {tokens[0]}: the sink, where a "
                                 f"{context.family.label}'s heads park the attention they spend nowhere else.")
    with pair_column:
        if not 0 <= st.session_state.get("rotary_pair", 0) < size // 2:  # a smaller head than the last one drawn
            st.session_state.pop("rotary_pair")
        pair = st.slider("Pair i (0: fastest)", 0, size // 2 - 1, 0, key="rotary_pair",
                         help=f"Pair 0 (numbers 0 and {size // 2}) turns fastest, pair {size // 2 - 1} slowest.")
        directions = st.toggle("Directions only", key="rotary_directions",
                               help="Each vector drawn at length 1 (its numbers divided by its pair's length), so "
                                    "that a short k shows beside a long q. Hover a point for its numbers.")
    picture = rotary.pair_picture(*arguments, query, key, pair)
    beside = not context.stacked and context.width - PAIR_CHART_PX >= WORDS_BESIDE_PX
    chart_column, words_column = st.columns([PAIR_CHART_PX, context.width - PAIR_CHART_PX]) if beside else (
        st.container(), st.container())
    words_column.caption(_pair_words(picture, tokens, directions))
    with chart_column:
        width = context.column_px(PAIR_CHART_PX / context.width) if beside else context.width
        chart = pair_chart(picture, f'q of "{tokens[query]}" ({query})', f'k of "{tokens[key]}" ({key})', tokens,
                           width, directions)
        st.altair_chart(lettered(chart, context.lettering), width="content", key="chart-rotary-pair")
        said([describe_pair(picture, tokens)])
    _shift(arguments)
    curve = rotary.decay(*arguments, query, key)
    chart = decay_chart(curve.distances, curve.scores, curve.fixed, curve.distance, context.width)
    st.altair_chart(lettered(chart, context.lettering), width="content", key="chart-rotary-decay")
    said([describe_decay(curve.distances, curve.scores, curve.fixed, curve.distance)])
    st.caption(_decay_words(curve, tokens, query, key))


def _token_select(label: str, tokens: list[str], default: int, key: str, help: str | None = None) -> int:
    """A token of the text by its position, starting at default; a choice past a shorter text's end starts again."""
    if st.session_state.get(key, 0) >= len(tokens):
        st.session_state.pop(key)
    return st.selectbox(label, range(len(tokens)), index=default, key=key, help=help,
                        format_func=lambda position: f"{position}: {tokens[position]}")


def _pair_words(picture, tokens: list[str], directions: bool) -> str:
    """What the pair's picture shows, in numbers off it."""
    theta = picture.frequency
    lengths = [float(np.linalg.norm(vector)) for vector in (picture.query_before, picture.query_after,
                                                             picture.key_before)]
    short = (f" k's pair is {lengths[0] / lengths[2]:.2g} times shorter than q's: Directions only shows it."
             if not directions and lengths[2] and lengths[0] / lengths[2] > SHORT_RATIO else "")
    return (f"Pair {picture.pair} turns {theta:.3g} rad ({math.degrees(theta):.3g}°) from one position to the next. "
            f"The query \"{tokens[picture.query]}\" stands at position {picture.query}: its pair turns "
            f"{picture.query * theta:.3g} rad; the key \"{tokens[picture.key]}\" at {picture.key} turns "
            f"{picture.key * theta:.3g} rad. A turn keeps length: the q pair is {lengths[0]:.4g} long before the "
            f"turn (dashed arrow, hollow tip) and {lengths[1]:.4g} after (solid, filled); the dots are where it "
            f"would stand at every other position.{short} The angle between the solid arrows is the angle between "
            f"the dashed ones plus (p − p')·θ_i: the positions reach the score only as their difference. This pair "
            f"adds {picture.pair_score:.3g} to the raw score q·k = {picture.score:.3g} (the Q·Kᵀ stage's cell).")


def _shift(arguments) -> None:
    """The shift test: Δ chosen, the largest change of a score it makes, and what that change is."""
    st.markdown("**Move the whole text along.** Were every token Δ positions later, each q and k would turn further, "
                "but every pair of a query and a key by the same extra angle: no score should change.")
    shift = st.number_input(f"Δ: positions every token moves (0 to {MAX_SHIFT:,})", min_value=0, value=DEFAULT_SHIFT,
                            step=1, key="rotary_shift")
    if shift > MAX_SHIFT:
        st.warning(f"Δ goes up to {MAX_SHIFT:,} here (eight texts of 512 tokens); {shift:,} is further. Pick a "
                   "smaller Δ.", icon=":material/straighten:")
        return
    test = rotary.shift_test(*arguments, int(shift))
    st.metric(f"Largest |score change| at Δ = {shift:,}", f"{test.largest_change:.2e}",
              help="max over every query and key position of |q(p + Δ)·k(p' + Δ) − q(p)·k(p')|, raw scores")
    if shift == 0:
        st.caption("Δ = 0 moves nothing: the scores are the same numbers, the change exactly 0.")
        return
    share = test.largest_change / test.largest_score if test.largest_score else 0.0
    past = (" These positions go past those the model was trained on; the turn is the same arithmetic there."
            if test.past_training else "")
    st.caption(f"Against raw scores up to {test.largest_score:.3g}, a change {share:.1e} as large: float32's rounding "
               f"of the angles (p + Δ)·θ_i, which grows with Δ. The move itself changed nothing: a score depends only "
               f"on p − p'.{past}")


def _decay_words(curve, tokens: list[str], query: int, key: int) -> str:
    """How to read the two distance curves."""
    own = (f"The dashed line is their distance in the text, {curve.distance}, where the curve holds the head's own "
           f"score, {curve.scores[curve.distance]:.3g}." if curve.distance is not None else
           f"The key \"{tokens[key]}\" comes after the query \"{tokens[query]}\": a decoder's mask hides it, and it "
           "has no distance on this curve.")
    return (f"Top: the raw score of this q and k had the key stood n tokens before the query, n = 0 to "
            f"{curve.distances[-1]}: one number for each distance, wherever the two stand. {own} Bottom: a vector "
            "of ones scored against itself. At n = 0 every pair agrees; further apart the fast pairs point every "
            "which way and cancel out, and only the slow ones still agree, so the score falls (the RoFormer paper's "
            "'long-term decay'). A trained head's q and k need not fall: they choose which pairs to fill.")
