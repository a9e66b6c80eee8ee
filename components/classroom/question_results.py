"""What a revealed question shows and what the teacher takes home: the class's answers as bars, and the CSV of every
question of the class. Plain functions of the store's records (components/server/question_store.py), no Streamlit.

The choices are the teacher's words or the text's tokens: in the chart they are data (a field's values, never a
field's name or an expression), and in the CSV a cell that a spreadsheet would read as a formula (=, +, -, @ first)
starts with an apostrophe.
"""

from __future__ import annotations

import csv
import io
import textwrap

import altair as alt
import pandas as pd

from components.server.question_store import Asked

ANSWER_COLOUR, OTHER_COLOUR = "#2e7d32", "#9e9e9e"
LABEL_PX = 140  # the choices' labels beside the bars
MOST_NAMED = 3  # choices named per round in the chart's text alternative, the most voted first
NAMED_CHARS = 40  # a choice's words in it, at most: a teacher's long choice read whole thrice is no summary
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CSV_COLUMNS = ("question", "kind", "text", "choice", "page_answer", "votes_round_1", "votes_round_2", "state")


def answers_frame(asked: Asked) -> pd.DataFrame:
    """One row per round and choice: the choice's position and words, the votes, and whether it is the page's."""
    rows = [{"round": f"Round {number}", "position": position, "choice": choice, "votes": votes[position],
             "answer": position == asked.question.answer}
            for number, votes in enumerate(asked.counts, start=1)
            for position, choice in enumerate(asked.question.choices)]
    return pd.DataFrame(rows, columns=["round", "position", "choice", "votes", "answer"])


def answers_chart(asked: Asked, width: int) -> alt.FacetChart:
    """The class's votes per choice, one panel of bars per round, one under the other (a phone's width holds them),
    in the choices' order, the page's answer in green and marked; width: the panel's, in px, its labels beside it."""
    frame = answers_frame(asked)
    bar_px = 16 if len(asked.question.choices) > 8 else 22
    y = alt.Y("choice:N", sort=list(dict.fromkeys(asked.question.choices)), title=None,
              axis=alt.Axis(labelLimit=LABEL_PX, labelOverlap=False))  # every choice named
    bars = alt.Chart().mark_bar().encode(
        y=y, x=alt.X("votes:Q", title="votes", axis=alt.Axis(tickMinStep=1, format="d")),
        color=alt.condition(alt.datum.answer, alt.value(ANSWER_COLOUR), alt.value(OTHER_COLOUR)),
        tooltip=[alt.Tooltip("choice:N"), alt.Tooltip("votes:Q")])
    mark = alt.Chart().transform_filter(alt.datum.answer).mark_text(
        align="left", dx=4, color=ANSWER_COLOUR, fontWeight="bold").encode(
        y=y, x="votes:Q", text=alt.value("✓ the page's answer"))
    return alt.layer(bars, mark, data=frame).properties(
        width=max(120, width - LABEL_PX - 60), height=bar_px * len(asked.question.choices)).facet(
        row=alt.Row("round:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left"))).properties(
        description=describe_answers(asked))  # the chart's name to a screen reader (Vega's aria-label)


def describe_answers(asked: Asked) -> str:
    """The answers chart's text alternative: each round's votes, its most chosen choices first with their votes,
    and the page's answer. Choices are quoted as Python writes a string (repr): a teacher's words are data."""
    choices = [textwrap.shorten(choice, NAMED_CHARS, placeholder="…") for choice in asked.question.choices]
    rounds = []
    for number, votes in enumerate(asked.counts, start=1):
        ranked = sorted(range(len(votes)), key=lambda position: -votes[position])  # stable: the choices' order on ties
        named = ", ".join(f"{choices[position]!r} {votes[position]}" for position in ranked[:MOST_NAMED])
        rest = ", the rest 0" if all(votes[position] == 0 for position in ranked[MOST_NAMED:]) else ", …"
        rounds.append(f"round {number}, {sum(votes)} votes: {named}"
                      + (rest if len(votes) > MOST_NAMED else ""))
    answer = asked.question.answer
    return (f"The class's answers, {'; '.join(rounds) or 'no round counted'}. "
            + ("The teacher's own question: no answer computed." if answer is None else
               f"The page's answer: {choices[answer]!r}, "
               + " then ".join(str(votes[answer]) for votes in asked.counts) + " votes."))


def results_csv(results: list[Asked]) -> str:
    """Every question of the class, one row per choice: its words, whether it is the page's answer, the votes of
    each round, and the question's state."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for asked in results:
        question = asked.question
        for position, choice in enumerate(question.choices):
            votes = [counts[position] for counts in asked.counts] + [""] * (2 - len(asked.counts))
            page_answer = "" if question.answer is None else ("yes" if position == question.answer else "no")
            writer.writerow([asked.number, question.kind, _cell(question.prompt), _cell(choice), page_answer,
                             *votes[:2], asked.state])
    return out.getvalue()


def _cell(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_STARTS) else text
