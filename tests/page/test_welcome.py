"""The first screen of a first visit (a bare link): what the page is, and four ways in; none on any other link."""

from __future__ import annotations

import numpy as np

from attention.dissect.trace import build_trace
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from tests.pages import TEXT, assert_healthy, open_page

WAYS = ("welcome_lesson", "welcome_head", "welcome_lab", "welcome_counting")


def buttons(page) -> dict[str, object]:
    return {button.key: button for button in page.button if button.key and button.key.startswith("welcome")}


def test_a_bare_link_opens_with_four_ways_in_and_names_the_texts_clearest_previous_token_head(bundled):
    page = open_page()
    assert_healthy(page)
    assert set(WAYS) <= set(buttons(page))
    encoding = encode(bundled, TEXT)
    shares = np.array([[np.diag(build_trace(bundled, encoding, TraceSettings(layer=layer, head=head))["weights"][0],
                                k=-1).mean() for head in range(12)] for layer in range(6)])  # (layers, heads)
    layer, head = np.unravel_index(shares.argmax(), shares.shape)
    assert buttons(page)["welcome_head"].label.endswith(f"layer {layer}, head {head}")
    assert shares[layer, head] > 0.5, "a head with a pattern worth looking at"
    # What to notice, on the card itself (a tooltip is not seen on a phone, nor unless pointed at)
    assert any(f"{shares[layer, head]:.0%} of a token's attention" in caption.value
               and "just below the diagonal" in caption.value for caption in page.caption)


def test_the_card_counts_the_lessons_own_steps_and_says_where_the_text_box_is_on_a_phone():
    from components.page.lesson_steps import lesson_for

    page = open_page()
    assert_healthy(page)
    bert_steps = len(lesson_for(rotates=False, shares=False))  # a Llama's lesson has two more
    assert buttons(page)["welcome_lesson"].label == f"Guided lesson: attention in {bert_steps} steps"
    [card] = [block.value for block in page.markdown if "Attention Anatomy" in block.value]
    assert "sidebar" in card and "on a phone, open the sidebar with **»** at the top left" in card
    assert "trained BERT" in card


def test_the_head_button_opens_that_head_and_the_card_is_gone():
    page = open_page()
    label = buttons(page)["welcome_head"].label
    buttons(page)["welcome_head"].click().run()
    assert_healthy(page)
    layer, head = (int(number) for number in label.rsplit(":", 1)[1].replace("layer", "").replace("head", "")
                   .split(","))
    shown = (page.query_params.get("layer", "0"), page.query_params.get("head", "0"))  # a default leaves the URL
    assert shown == (str(layer), str(head))
    assert any(s.value == f"Layer {layer}, head {head}" for s in page.subheader)
    assert not buttons(page)


def test_the_lesson_button_opens_the_lesson_and_close_closes_for_good():
    page = open_page()
    buttons(page)["welcome_lesson"].click().run()
    assert_healthy(page)
    assert page.query_params["view"] == "lesson" and not buttons(page)
    page = open_page()
    buttons(page)["welcome_close"].click().run()
    assert not buttons(page)
    page.run()
    assert not buttons(page)


def test_a_link_that_chose_something_or_a_projected_page_gets_no_card():
    for query in ({"text": "what if it rains"}, {"present": "1"}, {"view": "heads"}):
        page = open_page(query)
        assert_healthy(page)
        assert not buttons(page), query
