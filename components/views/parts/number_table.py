"""A heatmap's numbers as a table: what a reader who cannot see the colours reads instead (a screen reader names each
cell's row and column as it reads the cell), or a reader who wants the exact value.

Under a chart, a toggle opens it. Off by default: nothing is computed or sent until a reader asks, so a move of the
page costs what it cost before. The table holds the head the chart stands at; a move of the chart's own inputs
reruns the page, which draws the table of the new head.

An HTML table and not st.dataframe: a screen reader walks an HTML table by row and column, each cell with its
headers, where the data grid is a canvas it reads cell by cell, if at all. A long text's full table would hold
hundreds of thousands of cells: past FULL_TABLE_COLUMNS columns or FULL_TABLE_CELLS cells, each row says its
ROW_CELLS largest cells instead.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np
import streamlit as st

from components.assets import read_beside, style_tag
from components.charts.chart_text import largest_cells
from components.charts.masked import unmasked

FULL_TABLE_COLUMNS = 32  # a row of 32 numbers is as much as one is read aloud whole
FULL_TABLE_CELLS = 2048  # a 32 × 32 head, or a 512-token query's three numbers a key (the neuron view's)
ROW_CELLS = 5  # a long text's cells named a row, largest first
DECIMALS = 4  # a weight's fourth decimal is a hundredth of a percent
MASKED = "masked"  # a key its query may not look at: no number, and no colour to read either
TOGGLE_LABEL = "Show the numbers as a table"
_STYLE = style_tag(read_beside(__file__, "number_table.css"))


def table_asked(key: str) -> bool:
    """The toggle under the chart keyed `key`: whether its reader asked for the table. Space or Enter switches it
    from the keyboard, as any toggle."""
    return st.toggle(TOGGLE_LABEL, key=f"table_{key}",
                     help="The numbers of the head the chart shows, a row per query, for a screen reader or for the "
                          "exact values. A long text shows each row's largest cells.")


@st.fragment
def tables_on_request(key: str, draw: Callable[[], None]) -> None:
    """The toggle under the chart keyed `key` (table_asked) and, while it is on, what draw() draws (its number
    tables), in a fragment of their own: the toggle reruns them alone, not the view around them (a table is its
    reader's alone: page_state keeps it out of the link and the class). A move of the view reruns the fragment with
    the view's new draw."""
    if table_asked(key):
        draw()


def number_table(matrix: np.ndarray, rows: list[str], columns: list[str], *, caption: str,
                 row_title: str = "query token", column_title: str = "key token", no_number: str = MASKED) -> None:
    """Draw matrix (R, K) as a table whose rows are the row labels and columns the column labels, with caption;
    a cell with no number (masked: unmasked is False) reads no_number."""
    st.html(table_html(matrix, rows, columns, caption=caption, row_title=row_title, column_title=column_title,
                       no_number=no_number))


def table_html(matrix: np.ndarray, rows: list[str], columns: list[str], *, caption: str,
               row_title: str = "query token", column_title: str = "key token", no_number: str = MASKED) -> str:
    """The table's HTML: every label is escaped text, never markup; each value to DECIMALS decimals, or no_number.
    Past FULL_TABLE_COLUMNS columns or FULL_TABLE_CELLS cells, a row holds its ROW_CELLS largest cells
    ('animal' 0.4100), and how many of its keys are masked where any is."""
    matrix = np.asarray(matrix, dtype=np.float64)  # (R, K)
    shown = unmasked(matrix)  # (R, K), False where masked
    if len(columns) <= FULL_TABLE_COLUMNS and len(rows) * len(columns) <= FULL_TABLE_CELLS:
        head = [f"{row_title} \\ {column_title}", *columns]
        body = [[f"{value:.{DECIMALS}f}" if kept else no_number for value, kept in zip(values, kept_row, strict=True)]
                for values, kept_row in zip(matrix, shown, strict=True)]
        caption += f". Rows: {row_title}s; columns: {column_title}s."
    else:
        masked_counts = (~shown).sum(axis=1)  # (R,)
        head = [row_title, *(f"largest {place}" for place in range(1, ROW_CELLS + 1))]
        head += [f"{column_title}s {no_number}"] if masked_counts.any() else []
        body = []
        for values, kept_row, masked in zip(matrix, shown, masked_counts, strict=True):
            named = [f"{columns[column]!r} {values[column]:.{DECIMALS}f}"  # largest_cells never names a NaN
                     for _, column in largest_cells(np.where(kept_row, values, np.nan)[None, :], ROW_CELLS)]
            named += [""] * (ROW_CELLS - len(named))
            body.append(named + ([str(int(masked))] if masked_counts.any() else []))
        caption += (f". {len(rows)} {row_title}s × {len(columns)} {column_title}s: each row's {ROW_CELLS} largest "
                    "cells, largest first.")
    header = "".join(f'<th scope="col">{html.escape(name)}</th>' for name in head)
    lines = "".join(f'<tr><th scope="row">{html.escape(label)}</th>'
                    + "".join(f'<td class="number">{html.escape(cell)}</td>' for cell in cells) + "</tr>"
                    for label, cells in zip(rows, body, strict=True))
    return (f'{_STYLE}<div class="aa-number-table" data-testid="aa-number-table" tabindex="0" role="region" '
            f'aria-label="{html.escape(caption)}"><table><caption>{html.escape(caption)}</caption>'
            f"<thead><tr>{header}</tr></thead><tbody>{lines}</tbody></table></div>")
