"""The switch view's toggles in a real Chromium (components/views/parts/head_toggles.py): a press switches the
head off in the page's numbers and marks it as off (grey, struck through), where Streamlit's selected pill, pale
blue, looked like the head that was on; the keyboard works as the mouse does; the buttons under the toggles mark
what they set; a press asks the App's route for its numbers (as the mouse button goes down) and shows its answer,
which the run after it leaves as it is; and a press reruns the toggles and the numbers, not the ranking."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import pytest

from attention.experiments.embedding_switch import DEFAULT_SECOND
from attention.models.model_list import BUNDLED_MODEL
from components.views.parts.head_toggles import ANSWER_WAIT_MS
from harness.browser import act_and_measure, press_and_measure, wait_until_settled
from harness.server import get_json
from tests.browser.frames import answer, frames_after
from tests.marks import BROWSER_TESTS

pytestmark = BROWSER_TESTS

_LOOK = """button => ({background: getComputedStyle(button).backgroundColor,
  struck: getComputedStyle(button).textDecorationLine})"""
_TOGGLES = ".st-key-switch_heads button"


def toggle(page, layer: int, head: int):
    return page.locator(f"{_TOGGLES}[data-layer='{layer}'][data-head='{head}']")


def marked_off(page) -> list[tuple[int, int]]:
    """The (layer, head) pairs whose buttons read as pressed."""
    return [(int(layer), int(head)) for layer, head in page.locator(f"{_TOGGLES}[aria-pressed='true']").evaluate_all(
        "buttons => buttons.map(b => [b.dataset.layer, b.dataset.head])")]


def similarity_label(page) -> str:
    return page.locator(".switch-numbers .aa-metric-label").first.inner_text()


def open_switch(page, base_url) -> None:
    page.goto(f"{base_url}/?view=switch")
    page.locator(_TOGGLES).first.wait_for()
    wait_until_settled(page)


def test_a_head_switched_off_is_grey_and_struck_through_and_the_others_are_not(page, base_url):
    open_switch(page, base_url)
    assert page.locator(_TOGGLES).count() == 6 * 12
    act_and_measure(page, toggle(page, 1, 3).click)
    assert marked_off(page) == [(1, 3)]
    assert similarity_label(page) == "cos(A, B), 1 head off"
    off, on = toggle(page, 1, 3).evaluate(_LOOK), toggle(page, 1, 4).evaluate(_LOOK)
    assert off["struck"] == "line-through" and on["struck"] == "none"
    red, green, blue = (int(part) for part in off["background"].strip("rgba()").split(",")[:3])
    assert max(red, green, blue) - min(red, green, blue) <= 12, f"grey, not a tint of blue: {off['background']}"


def test_the_keyboard_switches_a_head_off_and_on_again(page, base_url):
    open_switch(page, base_url)
    press_and_measure(page, toggle(page, 5, 11), "Space")
    assert marked_off(page) == [(5, 11)] and similarity_label(page) == "cos(A, B), 1 head off"
    press_and_measure(page, toggle(page, 0, 0), "Enter")
    assert marked_off(page) == [(0, 0), (5, 11)] and similarity_label(page) == "cos(A, B), 2 heads off"
    press_and_measure(page, toggle(page, 5, 11), "Space")
    assert marked_off(page) == [(0, 0)] and similarity_label(page) == "cos(A, B), 1 head off"


def test_the_buttons_under_the_toggles_mark_the_heads_they_set(page, base_url):
    open_switch(page, base_url)
    act_and_measure(page, page.locator(".st-key-switch_strongest button").click)
    strongest = marked_off(page)
    assert len(strongest) == 3 and similarity_label(page) == "cos(A, B), 3 heads off"
    act_and_measure(page, page.locator(".st-key-switch_reset button").click)
    assert marked_off(page) == [] and similarity_label(page) == "cos(A, B), all heads on"


@pytest.mark.own_tab  # its websocket is watched or held
def test_a_head_switched_off_reruns_the_toggles_and_the_numbers_not_the_ranking(page, base_url):
    frames = frames_after(page)
    open_switch(page, base_url)
    opened = b"".join(frame for frame in frames if frame)
    ranking = b"Which heads move sentence A"
    assert ranking in opened and b"cos(A, B), all heads on" in opened
    frames.clear()
    act_and_measure(page, toggle(page, 1, 3).click)
    moved = answer(frames)
    assert b"cos(A, B), 1 head off" in moved, "the numbers follow the toggle"
    assert ranking not in moved and "A moved (1 − cos), one head off".encode() not in moved, \
        "the ranking, which no toggle changes, was sent again"


def test_a_press_shows_the_routes_numbers_for_the_heads_pressed_and_the_run_keeps_them(page, base_url):
    open_switch(page, base_url)
    toggle(page, 0, 4).click()
    wait_until_settled(page)
    # This press's ask, which names head 2:7: on a loaded machine an answer to the first press's (0:4) could still
    # come in after the page had settled, and was taken for it.
    def this_press(response) -> bool:
        return "/api/switch?" in response.url and "2:7" in unquote(response.url)

    with page.expect_response(this_press) as asked:
        act_and_measure(page, toggle(page, 2, 7).click)
    response = asked.value
    assert response.status == 200 and parse_qs(urlsplit(response.url).query)["off"] == ["0:4,2:7"]
    shown = page.locator(".switch-numbers")
    assert page.evaluate("() => document.querySelector('[data-heads-off]').dataset.headsOff") == "0:4,2:7"
    assert similarity_label(page) == "cos(A, B), 2 heads off"
    # What the route answered is what the page shows once the run after the press is drawn.
    answered = page.evaluate("html => Object.assign(document.createElement('div'), {innerHTML: html}).textContent",
                             response.json()["html"])
    assert answered == shown.evaluate("numbers => numbers.textContent")


def test_a_mouse_button_going_down_asks_the_route_and_the_click_takes_that_answer(page, base_url):
    """The numbers are asked for as the button goes down (the set the click will make), once: the click at its
    release shows that answer; a button pressed and left without a click switches nothing."""
    open_switch(page, base_url)
    asked = []
    page.on("request", lambda request: asked.append(request.url) if "/api/switch?" in request.url else None)
    toggle(page, 3, 2).hover()
    with page.expect_request(lambda request: "/api/switch?" in request.url) as going_down:
        page.mouse.down()
    assert parse_qs(urlsplit(going_down.value.url).query)["off"] == ["3:2"]
    assert marked_off(page) == [] and similarity_label(page) == "cos(A, B), all heads on", "no click yet"
    act_and_measure(page, page.mouse.up)
    assert marked_off(page) == [(3, 2)] and similarity_label(page) == "cos(A, B), 1 head off"
    assert len(asked) == 1, "the click took the answer asked for"
    toggle(page, 4, 4).hover()
    with page.expect_request(lambda request: "/api/switch?" in request.url) as going_down:
        page.mouse.down()
    assert parse_qs(urlsplit(going_down.value.url).query)["off"] == ["3:2,4:4"]
    page.mouse.move(0, 0)  # away from the button: no click
    page.mouse.up()
    wait_until_settled(page)
    assert marked_off(page) == [(3, 2)] and similarity_label(page) == "cos(A, B), 1 head off"


def test_the_route_answers_the_page_s_ask_and_refuses_what_no_page_asked_for(page, base_url):
    open_switch(page, base_url)
    ask = page.locator(".head-switches").evaluate("grid => grid.ask")
    assert list(parse_qs(ask)) == ["ask"], "the page's script holds an id, not the texts"
    status, body = get_json(f"{base_url}/api/switch?{ask}&off=1:3")
    assert status == 200 and "cos(A, B), 1 head off" in body["html"]
    status, body = get_json(f"{base_url}/api/switch?{ask}&off=9:9")
    assert status == 400 and body["error"].startswith("heads of a 6 × 12 model")
    texts = {"model": BUNDLED_MODEL, "text": "time flies like an arrow", "second": DEFAULT_SECOND, "off": "1:3"}
    for stranger in (urlencode(texts), f"{ask[:-2]}xx&off=1:3", "off=1:3"):
        status, body = get_json(f"{base_url}/api/switch?{stranger}")
        assert status == 404 and body["error"].startswith("no page of this server asked for that"), stranger
    status, body = get_json(f"{base_url}/api/switch?{ask}&off={'0:0,' * 5000}")
    assert status == 414 and body == {"error": "the query is too long"}


@pytest.mark.own_tab  # routes the page's requests
def test_a_press_whose_numbers_never_come_still_reaches_the_session(page, base_url):
    """The route hangs (held here, in the browser): the press is sent for the run after ANSWER_WAIT_MS all the
    same, and the run's numbers show."""
    open_switch(page, base_url)
    held = []
    page.route("**/api/switch?**", lambda route: held.append(route))  # never answered
    toggle(page, 2, 2).click()
    page.wait_for_function("() => document.querySelector('[data-heads-off]')?.dataset.headsOff === '2:2'",
                           timeout=(ANSWER_WAIT_MS + 30_000))
    wait_until_settled(page)
    assert held, "the press asked the route"
    assert marked_off(page) == [(2, 2)] and similarity_label(page) == "cos(A, B), 1 head off"
