"""The switch view's toggles: one row of buttons per layer, a pressed button a head switched off.

Shared by both of its experiments (the masked word and the sentence embedding). The heads switched off are the
page's state (PageState.off, off=2:5,5:0 in the link): a press in the browser, the reset button and the ranking's
"switch off the strongest" button all request it, and the toggles' fragment (the view's switchboard, an
own_fragment) then writes the link and sends the class the page's state (a press reruns that fragment alone). A new
model, chosen with its control, starts with all of its heads on (controls.model_select).

The 72 buttons of a 6 × 12 model are one small script (a Streamlit component, no iframe), not six rows of
st.pills: every press reruns the toggles' fragment, and the browser redrew all six rows of pills each time, about
as long as the rest of the rerun. The script draws the buttons once and, on each run, only marks which are
pressed. A press marks its button at once and sends the whole set of heads off (a trigger, so that the server
reads it once); the run that follows sends the set back, and the buttons show what the server holds.

The numbers the heads change can live in the script too (HTML the view makes, above the buttons), with the query
of the App's route that answers them (components/api/routes.py): a press then fetches the numbers for the new
set (asked as a mouse button or the space bar goes down, so that they are often there by its release), shows them
as soon as they come, and only once they are on the screen sends the set for the run, which finds them computed
and sends the same HTML, which changes nothing. The run's numbers are the truth: a fetch that fails, takes longer
than ANSWER_WAIT_MS, or answers for a set that is no longer the one pressed, is dropped, and the press goes by its run.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from components.assets import filled, read_beside
from components.page import controls, page_state

KEY = "switch_heads"  # the script's key; its container's CSS class is st-key-switch_heads
NAME = "attention_anatomy.head_switches"  # the script's name, as the page sends it
# How long a press waits for the route's numbers before it sends its set for the run regardless: longer than the
# route waits for a slot on a busy server (components/api/routes.py), short enough that a press never looks lost.
ANSWER_WAIT_MS = 3_000

# The buttons' script (head_toggles.js) and their look (head_toggles.css), beside this module.
_switches = st.components.v2.component(
    NAME, css=read_beside(__file__, "head_toggles.css"),
    js=filled(read_beside(__file__, "head_toggles.js"), answer_wait_ms=ANSWER_WAIT_MS))


def head_toggles(heads_off: tuple[tuple[int, int], ...], num_layers: int, num_heads: int, numbers: str = "",
                 ask: str = "") -> None:
    """Draw the numbers (HTML, every text escaped) and the toggles, heads_off (heads_off_now's) pressed, and the
    reset button. ask is the query of the route that answers the numbers for another set of heads off ("" when
    there is none): the script adds the set as off=layer:head,…"""
    _switches(key=KEY, data={"layers": num_layers, "heads": num_heads, "off": [list(pair) for pair in heads_off],
                             "numbers": numbers, "ask": ask},
              on_off_change=partial(_pressed, num_layers, num_heads))
    st.button("Switch all heads back on", key="switch_reset", icon=":material/restart_alt:",
              on_click=set_heads_off, args=((),))


def heads_off_now(num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """The pairs switched off on this page, those that exist in a num_layers × num_heads model; a link's (or a
    larger model's) heads that this one lacks are dropped, with a notice."""
    fitted, notices = page_state.fit_heads_off(controls.current_state(), num_layers, num_heads)
    if notices:
        controls.request(off=fitted.off)
    for notice in controls.held("off", notices, {"off": fitted.off}):
        st.caption(notice)
    return fitted.off


def valid_pairs(pairs, num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """pairs as sorted (layer, head) tuples, each once; anything that is not a head of the model is dropped (the
    browser sends the list, and nothing it sends is trusted)."""
    if not isinstance(pairs, (list, tuple)):
        return ()
    kept = set()
    for pair in pairs:
        if (isinstance(pair, (list, tuple)) and len(pair) == 2
                and all(isinstance(n, int) and not isinstance(n, bool) for n in pair)
                and 0 <= pair[0] < num_layers and 0 <= pair[1] < num_heads):
            kept.add((pair[0], pair[1]))
    return tuple(sorted(kept))


def heads_off_label(count: int) -> str:
    """How the numbers' labels name the set: "all heads on", "1 head off", "3 heads off"."""
    return "all heads on" if not count else f"{count} head{'s' * (count > 1)} off"


def heads_off_asked(asked: str, num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """The heads off of a request to the App's route, "layer:head,…" (the script's `off`), sorted; ValueError,
    saying why, for anything but heads of a num_layers × num_heads model, each once."""
    pairs = [pair.split(":") for pair in asked.split(",") if pair]
    if not all(len(pair) == 2 and all(part.isascii() and part.isdigit() for part in pair) for pair in pairs):
        raise ValueError("heads off as layer:head, comma-separated")
    heads_off = valid_pairs([[int(layer), int(head)] for layer, head in pairs], num_layers, num_heads)
    if len(heads_off) != len(pairs):
        raise ValueError(f"heads of a {num_layers} × {num_heads} model, each once")
    return heads_off


def _pressed(num_layers: int, num_heads: int) -> None:
    """The script's callback: the set of heads off that the browser sent, after a press."""
    controls.request(off=valid_pairs(st.session_state[KEY].get("off"), num_layers, num_heads))


def set_heads_off(pairs) -> None:
    """A button's callback: exactly these (layer, head) pairs off, every other head on."""
    controls.request(off=tuple(sorted(pairs)))
