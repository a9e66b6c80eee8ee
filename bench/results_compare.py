"""Two results files of `python -m bench`, case by case: each case's median and ratio before and after, slowest
after first, with the later file's median of the presses made again (every_control's "again": the repaint without
the first computing), and how many cases met their target in each.

    python -m bench.results_compare BEFORE AFTER          print the table
    python -m bench.results_compare BEFORE AFTER --docs   write it into docs/benchmarks.md, between BEGIN and END

A case in one file only is listed with a blank for the other. Rows without a ratio (the bare references, the
cold start) are left out: they have their own table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.report import Figure, Row
from bench.results_file import Results, ResultsError, read, shown
from bench.results_table import DOCS, shown_or_written

BEGIN = "<!-- bench-compare:start -->"
END = "<!-- bench-compare:end -->"
HEADER = ("| case | median before | median after | again after | ratio before | ratio after | target | after |\n"
          "|---|---|---|---|---|---|---|---|")


def compared(before: Results, after: Results) -> str:
    """Where the two files come from, the table, and the count of cases met in each."""
    old, new = _ratios(before), _ratios(after)
    cases = sorted(new.keys() | old.keys(), key=lambda case: -_value((new.get(case) or old[case]).ratio))
    lines = [f"| {case} | {_cell(old.get(case), 'median')} | {_cell(new.get(case), 'median')} | "
             f"{_cell(new.get(case), 'again')} | {_cell(old.get(case), 'ratio')} | {_cell(new.get(case), 'ratio')} | "
             f"{_cell(new.get(case) or old[case], 'target')} | {_verdict(new.get(case))} |" for case in cases]
    met = [sum(row.met is True for row in rows.values()) for rows in (old, new)]
    return "\n\n".join([f"Before: {_source(before)}. After: {_source(after)}. Each ratio is to its own run's "
                         "reference (the target's, in the later file's words).", "\n".join([HEADER, *lines]),
                        f"Met: {met[0]} of {len(old)} cases before, {met[1]} of {len(new)} after."])


def _ratios(results: Results) -> dict[str, Row]:
    """The rows with a ratio to their reference, by case."""
    return {row.case: row for row in results.rows if isinstance(row.ratio, Figure) and row.target != ""}


def _value(figure: Figure | str) -> float:
    return figure.value if isinstance(figure, Figure) else 0.0


def _cell(row: Row | None, name: str) -> str:
    if row is None:
        return ""
    value = getattr(row, name)
    return f"≤ {value}" if name == "target" and isinstance(value, Figure) else str(value)


def _verdict(row: Row | None) -> str:
    return "" if row is None or row.met is None else "met" if row.met else "**not met**"


def _source(results: Results) -> str:
    where = shown(results.path) if results.path else "a results file"
    return f"`{where}` (commit {results.commit}, {results.date.replace('T', ' ').removesuffix('Z')} UTC)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.results_compare", description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the results file of the earlier run")
    parser.add_argument("after", type=Path, help="the results file of the later run")
    parser.add_argument("--docs", nargs="?", type=Path, const=DOCS, metavar="MARKDOWN",
                        help=f"write the table between {BEGIN} and {END} of this document (default {shown(DOCS)})")
    args = parser.parse_args(argv)
    try:
        block = compared(read(args.before), read(args.after))
    except ResultsError as error:
        parser.exit(2, f"{parser.prog}: {error}\n")
    shown_or_written(parser, block, args.docs, f"{shown(args.before)} against {shown(args.after)}", BEGIN, END)


if __name__ == "__main__":
    main()
