"""`python -m bench`'s results as a file: bench/results/DATE-COMMIT.json, one per run.

It holds the table's rows with every figure as a number and its unit ({"value": 1234.5, "unit": "ms",
"digits": 0}: digits is how many decimals the table writes), the machine (bench/report.py's machine_facts), the
commit measured and whether the working tree held uncommitted changes to it, the date (UTC), the arguments, and
the notes printed under the table. A cell with no figure is null, or its word ("failed"). bench/results_table.py
makes the table again from a file.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench.report import FIGURES, UNITS, Figure, Row

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
FORMAT = 1  # raised when a field changes meaning; a reader refuses a format it does not know
TEXTS = ("case", "moved")


class ResultsError(ValueError):
    """A results file that is missing or is not one: the message names the file and what is wrong with it."""


@dataclass(frozen=True)
class Results:
    rows: list[Row]
    machine: dict[str, object]
    notes: list[str]
    arguments: list[str]  # python -m bench's, as typed
    commit: str  # the short hash of HEAD
    uncommitted_changes: bool  # tracked files differed from the commit while it ran
    date: str  # ISO 8601, UTC, to the second
    path: Path | None = field(default=None, compare=False)  # where it was read from

    @property
    def command(self) -> str:
        return " ".join(["python -m bench", *self.arguments])


def measured(rows: list[Row], machine: dict[str, object], notes: list[str], arguments: list[str],
             checkout: tuple[str, bool] | None = None) -> Results:
    """A run's results, dated now, of checkout (checked_out()'s answer when the run started; by default now's)."""
    commit, changed = checkout or checked_out()
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Results(rows, machine, notes, arguments, commit, changed, date)


def write(results: Results, out: Path | None = None) -> Path:
    """Write results to out, or to a new bench/results/DATE-COMMIT.json, all at once: a reader never finds half a
    file. Returns the path written."""
    path = Path(out) if out is not None else _new_path(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_json(results), ensure_ascii=False, indent=1) + "\n"
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.",
                                     suffix=".tmp", delete=False) as scratch:
        try:
            scratch.write(text)
            scratch.flush()
            os.fsync(scratch.fileno())
            os.chmod(scratch.name, 0o666 & ~_umask())  # made 0600 as a temporary file: the mode of any new file
        except BaseException:
            os.unlink(scratch.name)
            raise
    os.replace(scratch.name, path)
    return path


def read(path: Path) -> Results:
    """The results in path; ResultsError, naming the file, if it is missing or not a results file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such results file (python -m bench writes one into "
                           f"{shown(RESULTS)}/)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ResultsError(f"{path}: cannot be read as a results file: {error}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path}: not a results file, its JSON is broken: {error}") from None
    try:
        return from_json(document, path)
    except (KeyError, TypeError, ValueError) as error:
        raise ResultsError(f"{path}: not a results file of python -m bench: {_what(error)}") from None


def newest(folder: Path = RESULTS) -> Path:
    """The results file of folder with the latest date recorded in it (the name's date has no time of day)."""
    paths = sorted(Path(folder).glob("*.json"))
    if not paths:
        raise ResultsError(f"{folder}: no results file yet; python -m bench writes one")
    return max(paths, key=lambda path: read(path).date)


def to_json(results: Results) -> dict[str, object]:
    return {"format": FORMAT, "command": results.command, "arguments": results.arguments, "date": results.date,
            "commit": results.commit, "uncommitted_changes": results.uncommitted_changes,
            "machine": results.machine, "rows": [_row_json(row) for row in results.rows], "notes": results.notes}


def from_json(document: object, path: Path | None = None) -> Results:
    """Results from to_json's document; KeyError, TypeError or ValueError saying what does not fit."""
    if not isinstance(document, dict):
        raise TypeError(f"the document is a JSON {type(document).__name__}, not an object")
    if document.get("format") != FORMAT:
        raise ValueError(f"format {document.get('format')!r}, where this reader knows format {FORMAT}")
    arguments, notes, machine = document["arguments"], document["notes"], document["machine"]
    if not (_strings(arguments) and _strings(notes) and isinstance(machine, dict)):
        raise TypeError("arguments and notes must be lists of text, machine an object")
    for name in ("commit", "date"):
        if not isinstance(document[name], str):
            raise TypeError(f"{name} must be text")
    if not isinstance(document["uncommitted_changes"], bool) or not isinstance(document["rows"], list):
        raise TypeError("uncommitted_changes must be true or false, rows a list")
    rows = [_row(record, number) for number, record in enumerate(document["rows"], 1)]
    return Results(rows, machine, notes, arguments, document["commit"], document["uncommitted_changes"],
                   document["date"], path)


def _row_json(row: Row) -> dict[str, object]:
    record: dict[str, object] = {"case": row.case, "moved": row.moved, "count": row.count}
    for name in FIGURES:
        value = getattr(row, name)
        record[name] = _figure_json(value) if isinstance(value, Figure) else (value or None)
    record["met"] = row.met
    return record


def _figure_json(figure: Figure) -> dict[str, object]:
    record: dict[str, object] = {"value": figure.value, "unit": figure.unit, "digits": figure.digits}
    return record | ({"note": figure.note} if figure.note else {})


def _row(record: object, number: int) -> Row:
    if not isinstance(record, dict):
        raise TypeError(f"row {number} is not an object")
    if not all(isinstance(record[name], str) for name in TEXTS):
        raise TypeError(f"row {number}: case and moved must be text")
    count, met = record["count"], record["met"]
    if not (count is None or (isinstance(count, int) and not isinstance(count, bool))):
        raise TypeError(f"row {number}: count must be a whole number or null")
    if met not in (True, False, None):
        raise TypeError(f"row {number}: met must be true, false or null")
    # A file written before a figure was measured has no such field: its cell is blank
    cells = {name: _cell(record.get(name), f"row {number}, {name}") for name in FIGURES}
    return Row(record["case"], record["moved"], count, met=met, **cells)


def _cell(value: object, where: str) -> Figure | str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise TypeError(f"{where}: a figure must be an object with value and unit")
    number, unit, digits, note = value["value"], value["unit"], value.get("digits", 0), value.get("note", "")
    if isinstance(number, bool) or not isinstance(number, int | float):
        raise TypeError(f"{where}: value must be a number")
    if unit not in UNITS or not isinstance(digits, int) or not isinstance(note, str):
        raise ValueError(f"{where}: unit {unit!r} or digits {digits!r} or note {note!r} does not fit")
    return Figure(float(number), unit, digits, note)


def _strings(values: object) -> bool:
    return isinstance(values, list) and all(isinstance(value, str) for value in values)


def _what(error: Exception) -> str:
    return f"no field {error}" if isinstance(error, KeyError) else str(error)


def checked_out() -> tuple[str, bool]:
    """HEAD's short hash, and whether tracked files differ from it ("unknown", True outside a git checkout)."""
    def git(*arguments: str) -> str:
        return subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True, text=True, check=True).stdout

    try:
        return git("rev-parse", "--short", "HEAD").strip(), bool(git("status", "--porcelain",
                                                                      "--untracked-files=no").strip())
    except (OSError, subprocess.CalledProcessError):
        return "unknown", True


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _new_path(results: Results) -> Path:
    """bench/results/DATE-COMMIT.json, or DATE-COMMIT-2.json and on when a run of the same day and commit is there."""
    stem = f"{results.date[:10]}-{results.commit}"
    path, again = RESULTS / f"{stem}.json", 2
    while path.exists():
        path, again = RESULTS / f"{stem}-{again}.json", again + 1
    return path


def shown(path: Path) -> str:
    """path from the repository's top level when it is inside it."""
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
