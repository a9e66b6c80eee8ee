"""The table of a results file of `python -m bench`, printed again, or written into docs/benchmarks.md.

    python -m bench.results_table [FILE]          print FILE's table (default: the newest file in bench/results/)
    python -m bench.results_table [FILE] --docs   rewrite the table in docs/benchmarks.md from FILE

The docs' table stands between two marker lines, BEGIN and END below; --docs replaces what is between them and
leaves every other line of the document as it was.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.report import machine_line, table
from bench.results_file import ROOT, Results, ResultsError, newest, read, shown

DOCS = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- bench-table:start -->"
END = "<!-- bench-table:end -->"


def markdown(results: Results) -> str:
    """Where the figures come from, the table, the notes under it and the machine, as python -m bench printed
    them."""
    where = shown(results.path) if results.path else "a results file"
    changes = ", with uncommitted changes" if results.uncommitted_changes else ""
    date = results.date.replace("T", " ").removesuffix("Z") + " UTC"
    source = f"From `{where}`: commit {results.commit}{changes}, {date}, `{results.command}`."
    return "\n\n".join([source, table(results.rows), *results.notes, machine_line(results.machine)])


def rewrite(document: str, block: str, begin: str = BEGIN, end: str = END) -> str:
    """document with block between its begin and end lines instead of what stood there; ValueError if the two
    markers are not there once each, begin first."""
    lines = document.splitlines(keepends=True)
    begins = [number for number, line in enumerate(lines) if line.strip() == begin]
    ends = [number for number, line in enumerate(lines) if line.strip() == end]
    if len(begins) != 1 or len(ends) != 1 or begins[0] > ends[0]:
        raise ValueError(f"the document needs a line {begin} and, below it, a line {end}, once each "
                         f"(found {len(begins)} and {len(ends)})")
    return "".join([*lines[:begins[0] + 1], block.rstrip("\n") + "\n", *lines[ends[0]:]])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.results_table", description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, help="a results file (default: the newest in bench/results/)")
    parser.add_argument("--docs", nargs="?", type=Path, const=DOCS, metavar="MARKDOWN",
                        help=f"rewrite the table between the markers of this document (default {shown(DOCS)})")
    args = parser.parse_args(argv)
    try:
        results = read(args.file if args.file else newest())
    except ResultsError as error:
        parser.exit(2, f"{parser.prog}: {error}\n")
    shown_or_written(parser, markdown(results), args.docs, f"the table of {shown(results.path)}")


def shown_or_written(parser: argparse.ArgumentParser, block: str, docs: Path | None, what: str,
                     begin: str = BEGIN, end: str = END) -> None:
    """Print block; or, given a document, write it there between begin and end, and say so with what was written
    (exit 2, saying why, if the document cannot be read or has not its markers)."""
    if docs is None:
        print(block)
        return
    try:
        document = rewrite(docs.read_text(encoding="utf-8"), block, begin, end)
    except (OSError, ValueError) as error:
        parser.exit(2, f"{parser.prog}: {docs}: {error}\n")
    docs.write_text(document, encoding="utf-8")
    print(f"{shown(docs)}: {what}")


if __name__ == "__main__":
    main()
