"""The first screen of a first visit: what the page is, and four ways in.

A bare link (no parameter at all) used to open layer 0, head 0 of "time flies like an arrow", a diffuse head with
nothing to see, with the guided lesson fourth of eight views. On such a visit the page now opens with a short
card: the guided lesson, a head with a pattern one can name (the text's clearest previous-token head, found live),
and the two labs. It stays until the reader takes one of them or closes it, and never shows on a link, in a class
or in presentation mode, where someone chose the view already.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import streamlit as st

from components.page import controls
from components.page.lesson_steps import lesson_for
from components.page.page_state import PageState

_SHOWN = "_welcome_shown"  # in the session: True while the card is to be drawn


def first_visit(link: dict[str, list[str]]) -> None:
    """On a session's first run: a bare link is a first visit, and gets the card until it is dismissed."""
    st.session_state.setdefault(_SHOWN, not link)


def previous_token_head(model_name: str, text: str, state: PageState, num_layers: int, num_heads: int
                        ) -> tuple[int, int, float]:
    """(layer, head, share): the head of the model whose queries give the most of their attention to the token
    just before them, over this text, and that share (the mean of α[i, i−1] over the queries i ≥ 1)."""
    # Here, not at the top: the page imports this module before torch, for first_visit (page/first_paint.py).
    from components.caches import layers, stacks

    settings = layers.settings_for(dataclasses.replace(state, source="bert", scaling="sqrt"))
    weights = stacks.head_stack(model_name, text, "", settings, "weights", tuple(range(num_layers)),
                                 tuple(range(num_heads)))  # (nl, h, T, T)
    tokens = weights.shape[-1]
    share = weights[..., np.arange(1, tokens), np.arange(tokens - 1)].mean(axis=-1)  # (nl, h)
    layer, head = np.unravel_index(int(np.argmax(share)), share.shape)
    return int(layer), int(head), float(share[layer, head])


def welcome(model_name: str, text: str, state: PageState, num_layers: int, num_heads: int) -> None:
    """The card, while it is to be shown and the page is not projected. In one slot of the page, empty without the
    card: its going must not move what follows in the page's tree (page.notices says why)."""
    slot = st.container()
    if not st.session_state.get(_SHOWN) or state.present or not text.strip():
        return
    from components.caches import models  # here, not at the top: as in previous_token_head

    layer, head, share = previous_token_head(model_name, text, state, num_layers, num_heads)
    loaded = models.model(model_name)
    family = loaded.family
    steps = len(lesson_for(family.rotates, loaded.shape.kv_heads < loaded.shape.num_heads))  # a Llama's has two more
    with slot, st.container(border=True, key="welcome"):
        # A phone folds the sidebar away behind the » at the top left: the card says where the text box is.
        st.markdown(f"**Attention Anatomy** takes apart the self-attention of a real, trained {family.label}, step "
                    "by step, on a text of your own: type it in the **Text** box of the sidebar (on a phone, open "
                    "the sidebar with **»** at the top left). Every number is computed live and checked against "
                    "transformers. Where to begin:")
        left, right = st.columns(2, gap="small")  # on a phone, one under the other: left's, then right's
        left.button(f"Guided lesson: attention in {steps} steps", key="welcome_lesson", type="primary",
                    on_click=_go, kwargs={"view": "lesson", "step": 1}, width="stretch", icon=":material/school:")
        left.button(f"A head that looks back: layer {layer}, head {head}", key="welcome_head", on_click=_go,
                    kwargs={"view": "head", "layer": layer, "head": head}, width="stretch", icon=":material/grid_on:")
        # Under its button, on a phone too: what the head does, and where its map shows it.
        left.caption(f"On this text, {share:.0%} of a token's attention, on average, goes to the token just "
                     "before it: look for the dark line just below the diagonal of its weights.")
        right.button("Why divide by √d_k? The scaling lab", key="welcome_lab", on_click=_go, kwargs={"view": "lab"},
                     width="stretch", icon=":material/science:")
        right.button("Train a head to count letters", key="welcome_counting", on_click=_go,
                     kwargs={"view": "counting"}, width="stretch", icon=":material/model_training:")
        st.button("Close, and explore on my own", key="welcome_close", on_click=_go, type="tertiary",
                  icon=":material/close:")


def _go(**view) -> None:
    """A button's callback: the card is done with; the page moves to the view asked for, if any."""
    st.session_state[_SHOWN] = False
    if view:
        controls.request(**view)
