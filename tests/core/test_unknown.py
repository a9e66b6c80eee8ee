"""What an [UNK] token stands for (attention/text/unknown.py), with the bundled model's real tokenizer, and the
page's note on it."""

from __future__ import annotations

from attention.text.encoding import encode
from attention.text.unknown import UNKNOWN, alignment_keys, unknown_characters
from components.page.tokens import unknown_note
from tests import pages


def test_each_unknown_token_stands_for_the_characters_it_replaced(bundled):
    text, text_b = "I love 😀 and 你好 ok", "the 😀 x"
    stand_for = unknown_characters(bundled.tokenizer, text, text_b)
    tokens = encode(bundled, text, text_b, layers=()).tokens[0]
    assert len(stand_for) == len(tokens)
    assert [(token, characters) for token, characters in zip(tokens, stand_for, strict=True) if characters] == \
        [(UNKNOWN, "😀"), (UNKNOWN, "你"), (UNKNOWN, "好"), (UNKNOWN, "😀")]
    assert all(characters == "" for token, characters in zip(tokens, stand_for, strict=True) if token != UNKNOWN)


def test_a_long_text_is_cut_as_the_encoding_cuts_it(bundled):
    text = "🙂 word " * 400
    stand_for = unknown_characters(bundled.tokenizer, text, "", bundled.max_tokens)
    assert len(stand_for) == len(encode(bundled, text, layers=()).tokens[0]) == bundled.max_tokens


def test_unknown_tokens_are_equal_for_alignment_only_where_they_replaced_the_same_characters():
    keys = alignment_keys(["a", UNKNOWN, UNKNOWN], ("", "😀", "你"))
    assert keys[0] == "a" and keys[1] != keys[2]
    assert alignment_keys([UNKNOWN], ("😀",)) == alignment_keys([UNKNOWN], ("😀",))


def test_the_note_names_what_each_unknown_stands_for_as_code_never_markup():
    note = unknown_note(("", "<b>😀</b>", "", "`x`"))
    assert "`<b>😀</b>`" in note and "tokens: 1, 3" in note
    assert "` x `" in note, "a backtick of the text cannot end the code span"
    assert unknown_note(("", "", "")) is None


def test_the_page_says_what_its_unknown_tokens_stand_for():
    page = pages.open_page(text="I love 😀 so much")
    pages.assert_healthy(page)
    assert any("stands for `😀`" in caption.value for caption in page.caption)
    plain = pages.open_page(text="I love it so much")
    assert not any("[UNK]" in caption.value for caption in plain.caption)
