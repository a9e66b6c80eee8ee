"""The top of the page, compact: on a 1280×720 projector the view's first chart has to start on the first screen.

Streamlit's own top of page is a 6rem margin and a 2.75rem title; with the model's line and the token chips
that pushed a 15-token heatmap down to about 550 px, so that a projected page showed a quarter of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.assets import read_beside, style_tag

# The page's top, and in presentation mode its captions legible on a projector: page_head.css and
# page_head_presented.css, beside this module.
_STYLE = style_tag(read_beside(__file__, "page_head.css"))
_PRESENTED = style_tag(read_beside(__file__, "page_head_presented.css"))


def page_head(title: str, caption: str, beside: Callable[[DeltaGenerator], None] | None = None,
              present: bool = False) -> None:
    """The view's title and, under it, one line (none when caption is empty). beside(under), when given, draws in a
    column to their right, where the page's top has room (a projected class's code and QR code), and may add to
    the title's column, under the caption. present: the page's captions legible on a projector.

    One container whatever it holds, so that what follows keeps its place in the page's tree (a chart moved
    there is drawn anew from its spec: page.notices)."""
    with st.container():
        st.html(_STYLE + (_PRESENTED if present else ""))
        if beside is None:
            head, side = st.container(), None
        else:
            head, side = st.columns([3, 2], gap="medium")
        head.title(title, anchor=False)
        if caption:
            head.caption(caption)
        if side is not None:
            with side:
                beside(head)


def model_line(name: str, shape, family_label: str, family_reads: str, numbers_from: str, provenance) -> str:
    """The line under a view's title: the model, its shape and family, where its weights come from when that changes
    what its numbers mean (provenance, attention.models.loading.Provenance: random, or a quantized copy), and what
    the numbers below are computed from."""
    return (f"{model_title(name)}: {shape.num_layers} layers × {shape.num_heads} heads, hidden size "
            f"{shape.hidden_size}, a {family_label} ({family_reads}){weights_clause(provenance)}. Every number below "
            f"is computed live from {numbers_from}.")


def weights_clause(provenance) -> str:
    """Where the weights come from, as the model line says it after the model's family; "" for trained weights read
    as they are stored."""
    if provenance.random:
        return ("; its weights are random (built for tests), so its numbers show shapes, not what a trained model "
                "learned")
    if provenance.quantization:
        bits = re.match(r"I?Q(\d)_", provenance.quantization)  # Q4_1, Q5_K_M, IQ2_XS: the bits a weight takes
        size = f"{bits.group(1)}-bit " if bits else ""
        return (f"; its weights are a {size}quantized copy ({provenance.quantization}), dequantized to float32 as they "
                "load")
    return ""


def model_title(name: str) -> str:
    """A model as the page names it: a checkpoint folder given by its whole path (a deployer's /srv/models/tiny-gpt2)
    by the folder's own name, tiny-gpt2; the bundled model, a Hub id ("org/model") or a folder given as a relative
    path as they are written. The whole path told a learner nothing and filled the line under the title; it is kept
    where it helps, in the model selector's help (model_titles)."""
    path = Path(name).expanduser()
    return path.name if path.is_absolute() and path.name else name


def model_titles(names: Sequence[str]) -> dict[str, str]:
    """Each model's title (model_title), but a folder's whole path where two folders have one name."""
    titles = {name: model_title(name) for name in names}
    counts = {title: list(titles.values()).count(title) for title in titles.values()}
    return {name: title if counts[title] == 1 else name for name, title in titles.items()}
