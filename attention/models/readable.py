"""Tokens as a student can read them: GPT-2's byte-level pieces back in their own letters, with marks for blanks.

GPT-2's tokenizer works on UTF-8 bytes, not letters. So that every byte is a printable character in its
vocabulary, it writes each byte as one character of a fixed table (BYTE_OF_CHARACTER): the printable bytes
as themselves, the others (space, newline, the bytes of é) as letters from Ā onwards. A leading space thus
reads "Ġ", a newline "Ċ", and é, whose two bytes may fall in two tokens, "Ã©". Here the table is undone:

- a space reads "␣" (so "Ġcat" is "␣cat"), a newline "↵", a tab "⇥";
- bytes that are not a whole UTF-8 character in this token, and characters that print as nothing, read
  as their bytes in hexadecimal, one mark each: "⟨c3⟩⟨a9⟩" for the two halves of an é split apart.

BERT's WordPiece tokens are letters already ("##ing", "[CLS]") and are left as they are.
"""

from __future__ import annotations

from collections.abc import Iterable

SPACE, NEWLINE, TAB = "␣", "↵", "⇥"
MARKS = {" ": SPACE, "\n": NEWLINE, "\t": TAB}


def _byte_of_character() -> dict[str, int]:
    """GPT-2's table (openai/gpt-2 encoder.py, bytes_to_unicode), read backwards: {character: byte}.

    The 188 printable bytes ("!" to "~", "¡" to "¬", "®" to "ÿ") stand for themselves; the other 68
    (controls, space, DEL, no-break space, soft hyphen) take the characters from chr(256) up, in byte order.
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {chr(byte): byte for byte in printable}
    others = (byte for byte in range(256) if byte not in table.values())
    table.update({chr(256 + n): byte for n, byte in enumerate(others)})
    return table


BYTE_OF_CHARACTER = _byte_of_character()


def readable_token(token: str, byte_level: bool) -> str:
    """token as it reads: for byte_level (GPT-2's) tokens, its bytes decoded, marks for blanks and partial bytes."""
    if not byte_level:
        return token
    # A character outside the table (a token added to the vocabulary by hand) stands for its own UTF-8 bytes.
    raw = b"".join(bytes([BYTE_OF_CHARACTER[c]]) if c in BYTE_OF_CHARACTER else c.encode() for c in token)
    # surrogateescape: each byte that is no whole character here becomes one lone surrogate, U+DC80 + byte
    return "".join(_readable_character(c) for c in raw.decode("utf-8", errors="surrogateescape"))


def readable_tokens(tokens: Iterable[str], byte_level: bool) -> tuple[str, ...]:
    return tuple(readable_token(token, byte_level) for token in tokens)


def _readable_character(character: str) -> str:
    if character in MARKS:
        return MARKS[character]
    if 0xDC80 <= ord(character) <= 0xDCFF:  # a byte surrogateescape set aside
        return f"⟨{ord(character) - 0xDC00:02x}⟩"
    if not character.isprintable():  # a control or a blank other than the space: its bytes, so it shows
        return "".join(f"⟨{byte:02x}⟩" for byte in character.encode())
    return character
