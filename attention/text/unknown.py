"""What an [UNK] token stands for.

WordPiece has no piece for most emoji and for many characters of other scripts: each becomes the one token
[UNK], and the model reads them all alike. The tokenizer's offsets say which characters of the text each
[UNK] replaced, so that the page can say why a token is [UNK], and the compare view can align an [UNK] of
one text with an [UNK] of the other only where both stand for the same characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attention.models.tokenizer import Tokenizer

UNKNOWN = "[UNK]"


def unknown_characters(tokenizer: Tokenizer, text: str, text_b: str = "", max_tokens: int = 512) -> tuple[str, ...]:
    """For every token of the text (or the pair [CLS] text [SEP] text_b [SEP]), cut at max_tokens as
    encoding.encode cuts it: the characters an [UNK] stands for, and "" for every other token."""
    pair = text_b if text_b.strip() else None
    encoded = tokenizer.encode(text, pair, max_tokens)
    sources = (text, pair)
    return tuple(
        sources[sequence][start:end] if token == UNKNOWN and sequence is not None else ""
        for token, (start, end), sequence in zip(encoded.tokens, encoded.offsets, encoded.sequence_ids, strict=True)
    )


def alignment_keys(tokens: list[str], stand_for: tuple[str, ...]) -> list[str]:
    """The tokens, each [UNK] written with the characters it stands for: two [UNK]s are then equal only where
    they replaced the same characters."""
    return [f"{token}{characters}" if token == UNKNOWN else token
            for token, characters in zip(tokens, stand_for, strict=True)]
