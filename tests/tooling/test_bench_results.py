"""The bench's results file (bench/results_file.py) and the table made from it (bench/results_table.py).

The bench's own code, called in this process: its rows() over figures given here (no browser, no model), the
writer and the reader of its file, the table and the docs' rewrite. `python -m bench.results_table` runs as a
child process only where its command line is what is checked: its output, its exit status and its message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bench import first_paint, page_speed, results_file, server_memory, trace_overhead
from bench.__main__ import Figures, rows
from bench.report import Figure, Row, machine_facts, medians_table, table
from bench.results_file import Results, ResultsError, measured, read, write
from bench.results_table import main, markdown
from harness.browser import Timing

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = "python -m bench.results_table"


def bench_rows() -> list[Row]:
    """The bench's rows() over figures of every group: page cases (one drawn in the browser, one failed), the floor
    under Streamlit's defaults, the typed texts' forward, the cold start, first paints, memory and the trace."""
    cases = page_speed.app_cases("", "", "")
    drawn = next(case for case in cases if case.in_browser and "512" in case.name)
    rerun = next(case for case in cases if not case.in_browser)
    timings = [Timing(100.0 + 7.3 * move, 40.0 + move) for move in range(10)]
    floor = [Timing(90.0 + 3.1 * move, 30.25) for move in range(10)]
    pages = [page_speed.Result(drawn, timings, floor, tokens=512, painted_ms=[55.5 + move for move in range(10)],
                               repaints=[0, 1] * 5, bytes_in=[900 + 400 * move for move in range(10)],
                               open_bytes=3_500_000),
             page_speed.Result(rerun, timings, floor, tokens=32),
             page_speed.Result(rerun, [], [], error="timed out")]
    return rows(Figures(pages, healthy_s=0.52, drawn_s=4.43,
                        memory=server_memory.Memory(310.2, (700.4, 712.9, 724.0)),
                        text_forward_s=[0.0123, 0.0131], text_tokens=[32], trace_tokens=32,
                        trace_s={trace_overhead.BARE: [0.011, 0.012], trace_overhead.FULL: [0.013, 0.0135],
                                 trace_overhead.CACHED: [0.002, 0.0021]},
                        default_floor=floor,
                        first_paints=first_paint.FirstPaint([1.1, 1.2], [1.5, 1.6], [2.0, 2.1], [2.9, 3.0])))


def fixed_results(date: str = "2026-11-29T03:40:00Z") -> Results:
    """One run's results, of a fixed date and commit."""
    return Results([Row("trace", "a trace", 30, Figure(13.25, "ms", 1), "", Figure(1.104, "×", 2),
                        "≤ 1.2× the bare forward", True)],
                   machine_facts((0.5, 0.5, 0.5), None, 61.0), [], ["--only", "trace"], "abc1234", False, date)


def results_table(*arguments: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench.results_table", *map(str, arguments)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_the_bench_rows_read_back_from_their_file_as_they_were_written(tmp_path):
    made = bench_rows()
    results = measured(made, machine_facts((0.5, 0.5, 0.5), "140.0", 61.0), ["a note"], ["--only", "trace"])
    out = write(results, tmp_path / "run.json")
    back = read(out)
    assert len(made) >= 15, table(made)
    assert table(back.rows) == table(made)
    assert back == results
    assert [path.name for path in tmp_path.iterdir()] == ["run.json"]  # nothing half-written left beside it
    umask = os.umask(0o022)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # as any file written, not a private scratch file

    written = json.loads(out.read_text())
    assert written["arguments"] == ["--only", "trace"] and written["command"] == "python -m bench --only trace"
    assert len(written["commit"]) >= 7 and written["date"].endswith("Z")
    assert written["machine"]["chromium"] == "140.0" and written["machine"]["cores"] == os.cpu_count()
    by_case = {row["case"]: row for row in written["rows"]}
    full_trace = next(row for case, row in by_case.items() if case.startswith("full trace"))
    assert full_trace["median"] == {"value": pytest.approx(13.25), "unit": "ms", "digits": 1}  # not "13.2 ms"
    assert full_trace["ratio"]["value"] == pytest.approx(13.25 / 11.5) and full_trace["met"] is True
    assert full_trace["target"] == {"value": 1.2, "unit": "×", "digits": 1, "note": "the bare forward"}
    # bench/first_paint.py hands its rows over as text ("1.6 s"): the file keeps the number that text shows.
    assert by_case["first paint, app"]["median"] == {"value": 1.6, "unit": "s", "digits": 1}
    assert [row["median"] for row in written["rows"] if isinstance(row["median"], str)] == ["failed"]
    for row in written["rows"]:
        for name in ("median", "maximum", "server", "floor", "ratio", "target"):
            assert row[name] in (None, "failed") or type(row[name]["value"]) in (int, float), row

    shown = markdown(back)
    assert table(made) in shown
    assert f"From `{out}`: commit {written['commit']}" in shown
    assert "Machine: " in shown and "a note" in shown


def test_a_file_is_named_by_date_and_commit_and_the_newest_is_by_its_date(tmp_path, monkeypatch):
    monkeypatch.setattr(results_file, "RESULTS", tmp_path)
    fixed = fixed_results("2026-11-29T03:40:00Z")
    first, second = results_file.write(fixed), results_file.write(fixed)
    later = results_file.write(replace(fixed, commit="0000000", date="2026-11-29T09:00:00Z"))
    assert [first.name, second.name, later.name] == ["2026-11-29-abc1234.json", "2026-11-29-abc1234-2.json",
                                                     "2026-11-29-0000000.json"]
    assert results_file.newest(tmp_path) == later  # a later time of the same day, though its name sorts first


DOCUMENT = """# Benchmarks

Words above, kept as they are.

<!-- bench-table:start -->
| an old table |
|---|
<!-- bench-table:end -->

Words below, kept too.
"""


def test_the_docs_table_is_rewritten_between_its_markers_only(tmp_path, capsys):
    results = write(fixed_results(), tmp_path / "2026-11-29-abc1234.json")
    document = tmp_path / "benchmarks.md"
    document.write_text(DOCUMENT)

    for _ in range(2):  # and again: the same document, not a second table
        main([str(results), "--docs", str(document)])
        above, rest = document.read_text().split("<!-- bench-table:start -->\n")
        between, below = rest.split("<!-- bench-table:end -->\n")
        assert above == DOCUMENT.split("<!-- bench-table:start -->")[0]
        assert below == DOCUMENT.split("<!-- bench-table:end -->\n")[1]
        assert "an old table" not in between
        assert between.startswith(f"From `{results}`: commit abc1234, 2026-11-29 03:40:00 UTC, "
                                  "`python -m bench --only trace`.")
        assert "| trace | a trace | 30 | 13.2 ms |  |  |  |  | 1.10× | ≤ 1.2× the bare forward | met |" in between
    assert capsys.readouterr().out == f"{document}: the table of {results}\n" * 2


@pytest.mark.parametrize("markers", ["", "<!-- bench-table:end -->\n<!-- bench-table:start -->\n",
                                     "<!-- bench-table:start -->\n<!-- bench-table:start -->\n"
                                     "<!-- bench-table:end -->\n"])
def test_a_document_without_its_two_markers_is_left_alone(tmp_path, capsys, markers):
    results = write(fixed_results(), tmp_path / "results.json")
    document = tmp_path / "benchmarks.md"
    document.write_text(f"# Benchmarks\n\n{markers}")
    with pytest.raises(SystemExit) as exited:
        main([str(results), "--docs", str(document)])
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith(
        f"{PROGRAM}: {document}: the document needs a line <!-- bench-table:start -->")
    assert document.read_text() == f"# Benchmarks\n\n{markers}"


def test_the_command_prints_a_files_table(tmp_path):
    path = write(fixed_results(), tmp_path / "2026-11-29-abc1234.json")
    done = results_table(path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == markdown(read(path)) + "\n"
    assert "| trace | a trace | 30 | 13.2 ms |" in done.stdout


def test_the_command_names_a_missing_results_file(tmp_path):
    done = results_table(tmp_path / "2026-01-01-nothing.json")
    assert done.returncode == 2
    assert done.stderr == (f"{PROGRAM}: {tmp_path / '2026-01-01-nothing.json'}: no such results file "
                           "(python -m bench writes one into bench/results/)\n")


GOOD_ROW = {"case": "trace", "moved": "a trace", "count": 30, "median": {"value": 13.25, "unit": "ms", "digits": 1},
            "maximum": None, "server": None, "floor": None, "ratio": None, "target": None, "met": None}


def with_rows(path: Path, *records: dict[str, object]) -> Path:
    """A good results file at path but for its rows."""
    document = json.loads(write(fixed_results(), path).read_text())
    document["rows"] = list(records)
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("text, says", [
    ("{\"format\": 1, \"rows\": [", "not a results file, its JSON is broken: Expecting value: line 1 column 24"),
    ("[]", "not a results file of python -m bench: the document is a JSON list, not an object"),
    ("{\"format\": 1}", "not a results file of python -m bench: no field 'arguments'"),
    ("{\"format\": 7}", "not a results file of python -m bench: format 7, where this reader knows format 1"),
    ({"median": {"value": "13.25 ms", "unit": "ms"}}, "row 1, median: value must be a number"),
    ({"median": {"value": 13.25, "unit": "parsecs"}}, "row 1, median: unit 'parsecs'"),
    ({"count": "thirty"}, "row 1: count must be a whole number or null"),
    ({"met": "yes"}, "row 1: met must be true, false or null"),
])
def test_a_garbled_results_file_is_named_with_what_is_wrong(tmp_path, text, says):
    path = tmp_path / "garbled.json"
    if isinstance(text, dict):  # a good file but for one field of its row
        with_rows(path, GOOD_ROW | text)
    else:
        path.write_text(text)
    with pytest.raises(ResultsError) as refused:  # and no other error: the command prints it, no traceback
        read(path)
    assert str(refused.value).startswith(f"{path}: ")
    assert says in str(refused.value)


def test_a_good_row_in_that_file_reads(tmp_path):
    """The garbled files above differ from this one by their one field: it is that field the reader refuses."""
    path = with_rows(tmp_path / "good.json", GOOD_ROW)
    read_rows = read(path).rows
    assert read_rows == [Row("trace", "a trace", 30, Figure(13.25, "ms", 1), "", "", "", None)]
    assert "| trace | a trace | 30 | 13.2 ms |" in table(read_rows)


# ---- Two files, case by case (bench/results_compare.py) ----

def case_row(case: str, median: float, ratio: float, met: bool, again: float | None = None) -> Row:
    return Row(case, "its slider", 3, Figure(median, "ms"), "", Figure(ratio, "×", 1), "≤ 2× floor", met,
               again="" if again is None else Figure(again, "ms"))


def test_two_runs_are_compared_case_by_case_slowest_after_first(tmp_path):
    from bench.results_compare import compared

    before = replace(fixed_results(), rows=[case_row("head: layer", 300.0, 12.0, False),
                                            case_row("lab: gone", 90.0, 3.5, False)])
    after = replace(fixed_results("2026-11-30T03:40:00Z"), commit="def5678",
                    rows=[case_row("head: layer", 40.0, 1.6, True, again=35.0),
                          case_row("block: new", 500.0, 20.0, False),
                          Row("cold start", "launch", 1, Figure(3.5, "s", 1), "", "", "≤ 10 s", True)])
    lines = compared(read(write(before, tmp_path / "a.json")), read(write(after, tmp_path / "b.json"))).splitlines()
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| case")]
    assert rows == ["| block: new |  | 500 ms |  |  | 20.0× | ≤ 2× floor | **not met** |",
                    "| lab: gone | 90 ms |  |  | 3.5× |  | ≤ 2× floor |  |",
                    "| head: layer | 300 ms | 40 ms | 35 ms | 12.0× | 1.6× | ≤ 2× floor | met |"], \
        "no cold start: no ratio; the presses again, the later file's"
    assert lines[-1] == "Met: 0 of 2 cases before, 1 of 2 after."


def test_the_comparison_is_written_between_its_own_markers(tmp_path, capsys):
    from bench.results_compare import main as compare

    files = [write(fixed_results(date), tmp_path / f"{number}.json")
             for number, date in enumerate(["2026-11-29T03:40:00Z", "2026-11-30T03:40:00Z"])]
    document = tmp_path / "benchmarks.md"
    document.write_text(DOCUMENT + "<!-- bench-compare:start -->\nold\n<!-- bench-compare:end -->\nend\n")
    compare([*map(str, files), "--docs", str(document)])
    written = document.read_text()
    assert written.startswith(DOCUMENT) and written.endswith("<!-- bench-compare:end -->\nend\n")
    assert "old" not in written.split("<!-- bench-compare:start -->")[1]
    assert "| trace | 13.2 ms | 13.2 ms |  | 1.10× | 1.10× | ≤ 1.2× the bare forward | met |" in written


def test_the_small_benches_write_each_rows_median_and_its_ratio_to_the_reference_row():
    timings = {"floor": [30.0, 20.0, 22.0], "a fragment": [50.0, 44.0, 40.0], "none": [21.0, 23.0, 22.0]}
    assert medians_table("what reruns", timings, "floor").splitlines() == [
        "| what reruns | key -> settled, median | ratio to floor |", "|---|---|---|",
        "| floor | 22 ms | 1.00× |", "| a fragment | 44 ms | 2.00× |", "| none | 22 ms | 1.00× |"]
