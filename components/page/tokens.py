"""The WordPiece tokens as a row of chips, special tokens marked; a long text's folded to two rows.

Tokens come from user text, so they are escaped before they reach any HTML.
"""

from __future__ import annotations

import html

import streamlit as st

from components.assets import filled, read_beside, style_tag
from components.page.page_state import shorten

# Past this many tokens the chips are folded to one row, with a count that opens them: a 512-token text
# put 1,500–2,400 px of chips above the first chart, and on a 1280×720 projector even a second row of a
# short text's pushed the heatmap off the first screen (the heatmap's axes name the tokens too).
FOLD_AFTER = 10
ROW_REM = 1.62  # a row of chips, without the gap to the next
# The chips' look: tokens.css, beside this module.
_STYLE = style_tag(filled(read_beside(__file__, "tokens.css"), row_height=f"{ROW_REM}rem"))


def chips_html(tokens: list[str], special: list[bool]) -> str:
    """HTML for the chips: index, then the token, every token escaped; more than FOLD_AFTER folded to a row."""
    chips = "".join(
        f'<span class="aa-chip{" special" if is_special else ""}" title="token {i}">'
        f"<small>{i}</small>{html.escape(token)}</span>"
        for i, (token, is_special) in enumerate(zip(tokens, special, strict=True))
    )
    fold = ""
    if len(tokens) > FOLD_AFTER:
        fold = (f'<details class="aa-fold" data-testid="token-fold"><summary><span class="closed">All '
                f'{len(tokens)} tokens</span><span class="opened">Fold</span></summary></details>')
    return f'{_STYLE}<div class="aa-tokens">{fold}<div class="aa-chips" data-testid="token-chips">{chips}</div></div>'


def token_chips(tokens: list[str], special: list[bool]) -> None:
    st.html(chips_html(tokens, special))


def unknown_note(stand_for: tuple[str, ...], most: int = 8) -> str | None:
    """A sentence on the text's [UNK] tokens (stand_for: the characters each token stands for, "" for the
    others; texts.unknown_characters), or None without any. Markdown, every character from the text in a
    code span (shorten), so none of it is read as Markdown or HTML."""
    positions = [index for index, characters in enumerate(stand_for) if characters]
    if not positions:
        return None
    distinct = list(dict.fromkeys(stand_for[index] for index in positions))
    listed = ", ".join(shorten(characters, 12) for characters in distinct[:most]) + (" …" if distinct[most:] else "")
    count = "one token" if len(positions) == 1 else f"{len(positions)} tokens"
    return (f"`[UNK]` ({count}: {', '.join(str(index) for index in positions[:most])}"
            f"{' …' if positions[most:] else ''}) stands for {listed}: characters that this model's vocabulary "
            "has no piece for, such as emoji and many non-Latin scripts. The model reads every [UNK] as the same "
            "token, whatever it replaced.")
