"""Byte-level tokens (GPT-2's) as a student reads them: letters back, a mark for each blank, never "Ġ"."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention.models.readable import BYTE_OF_CHARACTER, NEWLINE, SPACE, TAB, readable_token, readable_tokens

MARK_OF_BYTE = {SPACE: b" ", NEWLINE: b"\n", TAB: b"\t"}
HEX_MARK = re.compile(r"⟨([0-9a-f]{2})⟩")
# GPT-2's stand-ins for the bytes that do not print: a student must never meet one
STAND_INS = {character for character, byte in BYTE_OF_CHARACTER.items() if chr(byte) != character}


def text_of(readable: tuple[str, ...]) -> str:
    """The text readable tokens were made from: the marks turned back into their bytes, the bytes decoded."""
    raw = b""
    for token in readable:
        for piece in re.split(r"(⟨[0-9a-f]{2}⟩)", token):
            if match := HEX_MARK.fullmatch(piece):
                raw += bytes([int(match[1], 16)])
            else:
                raw += b"".join(MARK_OF_BYTE.get(character, character.encode()) for character in piece)
    return raw.decode("utf-8")


@pytest.fixture(scope="module")
def tokenizer(tiny_gpt2_checkpoint):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_gpt2_checkpoint)


@pytest.mark.parametrize(("token", "reads"), [
    ("Ġcat", "␣cat"),  # a leading space
    ("ĠĠĠ", "␣␣␣"),
    ("Ċ", "↵"), ("ĊĊ", "↵↵"), ("ĉ", "⇥"),
    ("Ã©", "é"),  # both bytes of é in one token
    ("Ã", "⟨c3⟩"), ("©", "⟨a9⟩"),  # é's bytes in two tokens: neither is a letter
    ("ĠÃ", "␣⟨c3⟩"),
    ("Ġâĺĥ", "␣☃"),  # three bytes
    ("č", "⟨0d⟩"), ("Ā", "⟨00⟩"),  # a carriage return and a NUL print as nothing: their bytes
    ("Âł", "⟨c2⟩⟨a0⟩"),  # a no-break space, which would read as a space
    ("<|endoftext|>", "<|endoftext|>"),
    ("cat", "cat"),
])
def test_a_byte_level_token_reads_as_its_letters_with_marks(token, reads):
    assert readable_token(token, byte_level=True) == reads


@pytest.mark.parametrize("token", ["[CLS]", "##ing", "Ġ", "Ã©", "café"])
def test_wordpiece_tokens_are_left_as_they_are(token):
    assert readable_token(token, byte_level=False) == token


def test_the_table_is_gpt2_s_own_alphabet():
    from tokenizers import pre_tokenizers

    assert sorted(BYTE_OF_CHARACTER.values()) == list(range(256))
    assert set(BYTE_OF_CHARACTER) == set(pre_tokenizers.ByteLevel.alphabet())
    assert (BYTE_OF_CHARACTER["Ġ"], BYTE_OF_CHARACTER["Ċ"], BYTE_OF_CHARACTER["ĉ"]) == (32, 10, 9)


def test_the_tiny_gpt2_s_tokens_of_a_sentence_all_read(tokenizer):
    text = "the cat sat, zebra é\nnew"
    tokens = tokenizer.tokenize(text)
    readable = readable_tokens(tokens, byte_level=True)

    assert len(readable) == len(tokens) and all(readable)
    assert "␣cat" in readable and NEWLINE in readable
    assert not STAND_INS & set("".join(readable)), readable
    assert "é" in readable or "⟨c3⟩⟨a9⟩" in "".join(readable)  # é whole, or its two bytes in turn
    assert text_of(readable) == text
    without_marks = HEX_MARK.sub("", "".join(readable)).replace(SPACE, "").replace(NEWLINE, "")
    assert without_marks == "thecatsat,zebranew"


@settings(max_examples=200, deadline=None)
# codec: no lone surrogates, which no text typed on a page holds; nor the marks, which would read back as blanks
@given(text=st.text(st.characters(codec="utf-8", exclude_characters="␣↵⇥⟨"), max_size=40))
def test_any_text_reads_back_from_its_readable_tokens(tokenizer, text):
    readable = readable_tokens(tokenizer.tokenize(text), byte_level=True)
    assert text_of(readable) == text
    assert not STAND_INS & set("".join(readable)) - set(text)
