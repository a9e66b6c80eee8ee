"""A text longer than the page keeps (page_state.MAX_TEXT_CHARS) is cut to it, with a notice under its box; the box
used to take max_chars, and the browser then dropped a longer paste whole and said nothing."""

from __future__ import annotations

from components.page.page_state import MAX_TEXT_CHARS
from tests.pages import assert_healthy, open_page

ESSAY = " ".join(f"word{n}" for n in range(1_700))  # a 2,000-word essay's length: over 10,000 characters


def notices(page) -> list[str]:
    return [warning.value for warning in page.sidebar.warning]


def test_a_paste_over_the_limit_is_cut_to_it_and_the_page_says_so():
    assert len(ESSAY) > MAX_TEXT_CHARS
    page = open_page()
    page.text_area(key="text").set_value(ESSAY).run()
    assert_healthy(page)
    assert page.text_area(key="text").value == ESSAY[:MAX_TEXT_CHARS]
    assert notices(page) == [f"The text pasted had {len(ESSAY):,} characters: the page keeps the first "
                             f"{MAX_TEXT_CHARS:,}."]
    page.text_area(key="text").set_value("a short one").run()
    assert page.text_area(key="text").value == "a short one" and not notices(page), "the notice goes with the text"


def test_a_second_sentence_over_the_limit_is_cut_too():
    page = open_page()
    page.text_input(key="text_b").set_value(ESSAY).run()
    assert_healthy(page)
    assert page.text_input(key="text_b").value == ESSAY[:MAX_TEXT_CHARS] and len(notices(page)) == 1
