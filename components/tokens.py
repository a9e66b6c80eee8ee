"""The WordPiece tokens as a row of chips, special tokens marked.

Tokens come from user text, so they are escaped before they reach any HTML.
"""

from __future__ import annotations

import html

import streamlit as st

_STYLE = (
    "<style>.aa-chips{display:flex;flex-wrap:wrap;gap:.3rem;margin:.2rem 0 .6rem}"
    ".aa-chip{font-family:monospace;padding:.1rem .45rem;border-radius:.4rem;"
    "background:#e8f0fb;border:1px solid #b9cfe9;color:#12345a}"
    ".aa-chip.special{background:#fdebd3;border-color:#f0b46a;color:#6b3b00;font-weight:600}"
    ".aa-chip small{opacity:.6;margin-right:.25rem}</style>"
)


def chips_html(tokens: list[str], special: list[bool]) -> str:
    """HTML for the chips: index, then the token, every token escaped."""
    chips = "".join(
        f'<span class="aa-chip{" special" if is_special else ""}" title="token {i}">'
        f"<small>{i}</small>{html.escape(token)}</span>"
        for i, (token, is_special) in enumerate(zip(tokens, special, strict=True))
    )
    return f'{_STYLE}<div class="aa-chips" data-testid="token-chips">{chips}</div>'


def token_chips(tokens: list[str], special: list[bool]) -> None:
    st.html(chips_html(tokens, special))
