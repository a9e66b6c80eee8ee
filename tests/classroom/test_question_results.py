"""A revealed question's bars and the teacher's CSV (components/classroom/question_results.py): the votes of each round
per choice, the page's answer marked, and a teacher's words kept as data (no spreadsheet formula, no chart field)."""

from __future__ import annotations

import csv
import io

from components.classroom.question_results import answers_chart, answers_frame, results_csv
from components.server.question_store import Asked, Question

COMPUTED = Asked(1, Question("previous", "Which head is a previous-token head?", ("Head 0", "Head 1", "Head 2"),
                             answer=2, why="head 2 puts 0.9 on the token before"), "revealed", 2,
                 ((3, 1, 4), (0, 1, 7)))
OWN = Asked(2, Question("own", "=HYPERLINK(\"http://x\")", ("@SUM(A1)", "-1", "datum.x", "plain")), "closed", 1,
            ((1, 0, 2, 0),))


def test_the_csv_has_a_row_per_choice_with_each_rounds_votes_and_the_pages_answer():
    rows = list(csv.DictReader(io.StringIO(results_csv([COMPUTED, OWN]))))
    assert [(row["question"], row["choice"], row["votes_round_1"], row["votes_round_2"], row["page_answer"])
            for row in rows[:3]] == [("1", "Head 0", "3", "0", "no"), ("1", "Head 1", "1", "1", "no"),
                                     ("1", "Head 2", "4", "7", "yes")]
    own = rows[3:]
    assert [row["choice"] for row in own] == ["'@SUM(A1)", "'-1", "datum.x", "plain"]
    assert {row["text"] for row in own} == {"'=HYPERLINK(\"http://x\")"}
    assert {row["page_answer"] for row in own} == {""} and {row["votes_round_2"] for row in own} == {""}


def test_the_chart_draws_every_round_and_keeps_the_choices_as_data():
    frame = answers_frame(COMPUTED)
    assert frame.groupby("round")["votes"].sum().to_dict() == {"Round 1": 8, "Round 2": 8}
    assert frame.loc[frame.answer, "choice"].unique().tolist() == ["Head 2"]
    spec = answers_chart(OWN, 640).to_dict()
    values = next(iter(spec["datasets"].values()))
    assert [row["choice"] for row in values] == list(OWN.question.choices)
    for layer in spec["spec"]["layer"]:  # the choices stand in the spec only as the order of the bars, a list of values
        assert layer["encoding"]["y"].pop("sort") == list(OWN.question.choices)
    assert "datum.x" not in str(spec["spec"]) and "@SUM" not in str(spec["spec"])
