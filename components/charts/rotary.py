"""The Rotation stage's charts: one pair of a query's and a key's numbers before and after their turn, on the circle
each walks over the positions; and the score against the distance between query and key. Numbers in (the records
of attention/dissect/rotary_views.py), Vega-Lite out.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from components.charts.lettering import title_lines
from components.charts.spoken_numbers import figure, signed

QUERY_COLOUR, KEY_COLOUR = "#1f4e9c", "#b35900"  # blue and a dark orange, told apart without colour vision too
AXIS_ROOM_PX = 70  # px left of a plot for its axis labels and title
DECAY_AXIS_ROOM_PX = 85  # the same for the distance chart, whose lower plot's labels are longer ("−0.5")
PAIR_PLOT_PX = 380  # px: the pair's square plot at most
DECAY_PLOT_PX = 640  # px: the distance chart's plots at most wide
DECAY_PANEL_PX = 150  # px: each of its two plots high
SMALLEST_PLOT_PX = 200
OWN = "this q and k"  # the distance chart's series of the chosen query and key
FIXED = "q = k = (1, …, 1), over its value at 0"
PAD = alt.AutoSizeParams(type="pad", contains="padding")


def pair_chart(picture, query_label: str, key_label: str, tokens: Sequence[str], width: int,
               directions: bool = False) -> alt.LayerChart:
    """picture: a PairPicture. Its q and k pair as arrows from 0, dashed with a hollow head before the turn, solid
    with a filled head after it; every position's place on the circle as a dot (its token on hover); the circle
    itself faint. query_label, key_label: the two vectors in the legend ('q of "sat" (3)'); tokens: every position's
    token; directions: each vector's points divided by its pair's length, so that a short k shows beside a long q
    (the hover keeps the numbers themselves). Axes to one scale, so that a circle is round."""
    size = max(SMALLEST_PLOT_PX, min(PAIR_PLOT_PX, width - AXIS_ROOM_PX))
    whose = {"q": query_label, "k": key_label}
    lengths = {who: float(np.linalg.norm(before)) if directions and np.linalg.norm(before) > 0 else 1.0
               for who, before in (("q", picture.query_before), ("k", picture.key_before))}

    def point(who: str, value: np.ndarray, **fields) -> dict:  # a row: where it is drawn, and its numbers
        return {"who": whose[who], "x": float(value[0]) / lengths[who], "y": float(value[1]) / lengths[who],
                "value_x": float(value[0]), "value_y": float(value[1]), **fields}

    arrows = pd.DataFrame([point(who, vector, kind="arrow", what=f"{who} {when}", when=f"{when} the turn", x0=0.0,
                                 y0=0.0)
                           for who, when, vector in (("q", "before", picture.query_before),
                                                     ("q", "after", picture.query_after),
                                                     ("k", "before", picture.key_before),
                                                     ("k", "after", picture.key_after))])
    positions = pd.DataFrame([point(who, value, kind="position", position=position, token=tokens[position])
                              for who, circle in (("q", picture.query_circle), ("k", picture.key_circle))
                              for position, value in enumerate(circle)])
    rings = pd.DataFrame([point(who, value, kind="ring", order=order)
                          for who, ring in (("q", picture.query_ring), ("k", picture.key_ring))
                          for order, value in enumerate(ring)])
    reach = 1.12 * max(float(np.abs(rings[["x", "y"]].to_numpy()).max()), 1e-6)
    scale = alt.Scale(domain=[-reach, reach], nice=False, zero=True)
    first, second = picture.numbers  # i and i + d/2
    unit = " ÷ its pair's length" if directions else ""
    titles = f"number {first} of the head{unit}", f"number {second} of the head{unit}"
    x, y = alt.X("x:Q", scale=scale, title=titles[0]), alt.Y("y:Q", scale=scale, title=titles[1])
    colour = alt.Color("who:N", title=None, scale=alt.Scale(domain=list(whose.values()),
                                                            range=[QUERY_COLOUR, KEY_COLOUR]),
                       legend=alt.Legend(orient="bottom", direction="vertical"))
    dash = alt.StrokeDash("when:N", title=None, scale=alt.Scale(domain=["before the turn", "after the turn"],
                                                                range=[[5, 4], [1, 0]]),
                          legend=alt.Legend(orient="bottom", direction="vertical"))
    numbers = [alt.Tooltip("value_x:Q", title=f"number {first}", format=".4g"),
               alt.Tooltip("value_y:Q", title=f"number {second}", format=".4g")]
    ring = alt.Chart(rings).mark_line(strokeWidth=1, opacity=0.35).encode(x=x, y=y, color=colour, order="order:Q",
                                                                         detail="who:N")
    dots = alt.Chart(positions).mark_circle(size=28, opacity=0.55).encode(
        x=x, y=y, color=colour,
        tooltip=[alt.Tooltip("who:N", title="vector"), alt.Tooltip("position:Q", title="if it stood at position"),
                 alt.Tooltip("token:N", title="the token there"), *numbers])
    lines = alt.Chart(arrows).mark_rule(strokeWidth=2.5).encode(
        x=alt.X("x0:Q", scale=scale, title=titles[0]), y=alt.Y("y0:Q", scale=scale, title=titles[1]), x2="x:Q",
        y2="y:Q",
        color=colour, strokeDash=dash)
    tips = [alt.Tooltip("what:N", title="arrow"), *numbers]
    before = alt.Chart(arrows).transform_filter(alt.datum.when == "before the turn").mark_point(
        size=110, filled=False, strokeWidth=2.5, opacity=1).encode(x=x, y=y, color=colour, tooltip=tips)
    after = alt.Chart(arrows).transform_filter(alt.datum.when == "after the turn").mark_circle(
        size=130, opacity=1).encode(x=x, y=y, color=colour, tooltip=tips)
    title = f"Pair {picture.pair} (numbers {first} and {second}) of q and k, turned"
    return alt.layer(ring, dots, lines, before, after).properties(
        title=title_lines(title, size + AXIS_ROOM_PX), width=size, height=size, autosize=PAD)


def decay_chart(distances: np.ndarray, scores: np.ndarray, fixed: np.ndarray, own_distance: int | None,
                width: int) -> alt.VConcatChart:
    """The chosen q and k's raw score against distance n (the key n tokens before the query), a rule at their own
    distance in the text; under it the vector of ones scored against itself, over its value at 0."""
    plot = max(SMALLEST_PLOT_PX, min(DECAY_PLOT_PX, width - DECAY_AXIS_ROOM_PX))
    frame = pd.concat([pd.DataFrame({"distance": distances, "score": scores, "series": OWN}),
                       pd.DataFrame({"distance": distances, "score": fixed, "series": FIXED})], ignore_index=True)
    x = alt.X("distance:Q", title="distance n: the key n tokens before the query",
              scale=alt.Scale(domain=[0, int(distances[-1])], nice=False))
    tips = [alt.Tooltip("distance:Q", title="n"), alt.Tooltip("score:Q", format=".4g")]
    own = alt.Chart(frame).transform_filter(alt.datum.series == OWN).mark_line(
        strokeWidth=1.5, color=QUERY_COLOUR).encode(x=x, y=alt.Y("score:Q", title="raw score q·k"), tooltip=tips)
    panels = [own]
    if own_distance is not None:
        rule = alt.Chart(pd.DataFrame({"own": [own_distance]})).mark_rule(color=KEY_COLOUR, strokeDash=[4, 3]).encode(
            x=alt.X("own:Q", title=None), tooltip=[alt.Tooltip("own:Q", title="their distance in the text")])
        panels.append(rule)
    top = alt.layer(*panels).properties(
        title=title_lines(f"Score of this q and k against distance ({_own_words(own_distance)})", plot),
        width=plot, height=DECAY_PANEL_PX)
    bottom = alt.Chart(frame).transform_filter(alt.datum.series == FIXED).mark_line(
        strokeWidth=1.5, color="#4c4c4c").encode(
        x=x, y=alt.Y("score:Q", title="score / score at 0", scale=alt.Scale(domain=[-1, 1])), tooltip=tips).properties(
        title=title_lines("A vector of ones scored against itself n apart: the mean of cos(n·θ_i)", plot),
        width=plot, height=DECAY_PANEL_PX)
    return alt.vconcat(top, bottom, spacing=24).properties(autosize=PAD)


def _own_words(own_distance: int | None) -> str:
    return "dashed: their distance in the text" if own_distance is not None else "the key comes after the query"


def describe_pair(picture, tokens: Sequence[str]) -> str:
    """pair_chart in words, for a screen reader: how far the pair of q and of k turns at their positions, how long
    each is (a turn keeps length), and what the pair adds to the raw score. picture: a PairPicture."""
    query_length, key_length = (float(np.linalg.norm(vector)) for vector in (picture.query_before, picture.key_before))
    first, second = picture.numbers
    return (f"Pair {picture.pair} (numbers {first} and {second}) of q and k, turned: q of {tokens[picture.query]!r} at "
            f"position {picture.query} turns {figure(picture.query * picture.frequency)} rad, k of "
            f"{tokens[picture.key]!r} at {picture.key} turns {figure(picture.key * picture.frequency)} rad; q's pair "
            f"is {figure(query_length)} long, k's {figure(key_length)}. It adds {signed(picture.pair_score)} to the "
            f"raw score q·k = {signed(picture.score)}.")


def describe_decay(distances: np.ndarray, scores: np.ndarray, fixed: np.ndarray, own_distance: int | None) -> str:
    """decay_chart in words: the chosen q and k's raw score at distance 0, at its highest and lowest, and at their
    own distance in the text; the vector of ones at the farthest distance (1 at 0)."""
    high, low = int(np.argmax(scores)), int(np.argmin(scores))
    own = (f"at their distance in the text, {own_distance}, {signed(scores[own_distance])}"
           if own_distance is not None else "the key comes after the query: no distance of theirs")
    return (f"Score of this q and k against distance n = 0 to {int(distances[-1])}: {signed(scores[0])} at n = 0, "
            f"highest {signed(scores[high])} at n = {int(distances[high])}, lowest {signed(scores[low])} at "
            f"n = {int(distances[low])}; {own}. A vector of ones scored against itself: 1 at n = 0, "
            f"{signed(fixed[-1])} at n = {int(distances[-1])}.")
