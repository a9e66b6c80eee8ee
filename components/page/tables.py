"""Tables: the current head as one row per (query, key) pair for the CSV download (under the mask shown, with what
each key moves), and small tables of numbers drawn on the page."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from attention.stages.dot_product import MASKED_SCORE
from components.assets import read_beside, style_tag

CSV_COLUMNS = ["query_index", "query_token", "key_index", "key_token", "score", "masked_score", "weight",
               "alpha_fx_norm"]
_TABLE_STYLE = style_tag(read_beside(__file__, "tables.css"))  # the tables' look, beside this module


def head_table(tokens: list[str], scaled: np.ndarray, masked: np.ndarray, weights: np.ndarray,
               moved: np.ndarray) -> pd.DataFrame:
    """scaled, masked, weights and moved are (T, T): the score after scaling, the score softmax reads (the mask
    added: -inf where a query may not look at a key), the weight after softmax and what the key hands the query,
    α_ij·‖f(x_j)‖ (Kobayashi et al. 2020)."""
    count = len(tokens)
    query_index, key_index = np.indices((count, count))  # (T, T) each
    names = np.asarray(tokens, dtype=object)
    masked = np.asarray(masked, dtype=np.float32)
    return pd.DataFrame({
        "query_index": query_index.ravel(),
        "query_token": names[query_index.ravel()],
        "key_index": key_index.ravel(),
        "key_token": names[key_index.ravel()],
        "score": np.asarray(scaled, dtype=np.float32).ravel(),
        # The core's −∞ is float32's lowest number (MASKED_SCORE): written as -inf, which a spreadsheet or
        # pandas reads as what it stands for.
        "masked_score": np.where(masked > MASKED_SCORE, masked, -np.inf).astype(np.float32).ravel(),
        "weight": np.asarray(weights, dtype=np.float32).ravel(),
        "alpha_fx_norm": np.asarray(moved, dtype=np.float32).ravel(),
    }, columns=CSV_COLUMNS)


def head_csv(tokens: list[str], scaled: np.ndarray, masked: np.ndarray, weights: np.ndarray,
             moved: np.ndarray) -> str:
    # float32 written with 9 significant digits reads back to exactly the same float32.
    return head_table(tokens, scaled, masked, weights, moved).to_csv(index=False, float_format="%.9g")


def numbers_html(frame: pd.DataFrame, testid: str, bars: tuple[str, ...] = (),
                 formats: Mapping[str, Callable[[float], str]] | None = None) -> str:
    """frame as an HTML table for st.html: every text escaped; numbers to 4 decimals (or as formats says for
    their column), with the exact float32 (9 significant digits) as their tooltip; the columns in bars
    (values in [0, 1]) drawn as bars as well. Whole numbers are written as they are (a token id, a position), or as
    formats says where it names their column ("{:,}".format for a count of bytes), their exact value the tooltip.

    HTML and not st.dataframe: the data grid cost the browser about 130 ms on every move of a view,
    a plain table next to nothing.
    """
    formats = formats or {}
    head = "".join(f"<th>{html.escape(str(name))}</th>" for name in frame.columns)
    rows = []
    for values in frame.itertuples(index=False):
        cells = []
        for name, value in zip(frame.columns, values, strict=True):
            if isinstance(value, float | np.floating):
                shown = formats.get(name, "{:.4f}".format)(value)
                style = ""
                if name in bars:
                    filled = f"{100 * min(max(float(value), 0.0), 1.0):.1f}%"
                    style = f' style="background:linear-gradient(90deg,#c6dbef {filled},transparent {filled})"'
                cells.append(f'<td class="number" title="{np.float32(value):.9g}"{style}>{html.escape(shown)}</td>')
            elif isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_) and name in formats:
                cells.append(f'<td class="number" title="{int(value)}">{html.escape(formats[name](value))}</td>')
            else:
                cells.append(f"<td>{html.escape(str(value))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (f'{_TABLE_STYLE}<div class="aa-table" data-testid="{html.escape(testid)}"><table>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def metric_html(label: str, value: str, delta: str | None = None, help: str = "") -> str:
    """One number with its label and, when given, its change (a leading "-" falls, anything else rises), as
    st.metric shows it: for numbers that a script in the browser redraws itself (the switch view's toggles).
    Every text escaped; the help is the label's tooltip."""
    change = ""
    if delta is not None:
        falls = delta.startswith("-")
        change = (f'<div class="aa-metric-delta {"falls" if falls else "rises"}">{"▼" if falls else "▲"} '
                  f"{html.escape(delta)}</div>")
    return (f'<div class="aa-metric" data-testid="aa-metric"><div class="aa-metric-label" title="{html.escape(help)}">'
            f'{html.escape(label)}</div><div class="aa-metric-value">{html.escape(value)}</div>{change}</div>')
