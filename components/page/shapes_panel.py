"""The side panel: every step of the trace with its actual shape and its formula, and what the model's key/value
cache weighs per token.

It reads each step's stage, name, shape and formula only, so the page hands it the trace's outline
(attention/dissect/outline.py): the same steps, without the tensors that building them would cost."""

from __future__ import annotations

import html
from typing import NamedTuple

import streamlit as st

from attention.stages.kv_heads import BYTES_PER_NUMBER, CacheSize
from components.assets import read_beside, style_tag
from components.page.lesson_steps import STEP_ATTRIBUTE

STAGE_TITLES = {
    "inputs": "Tokens",
    "embeddings": "Embeddings",
    "projections": "Projections, all heads",
    "head": "One head",
    "heads": "All heads together",
    "block": "The block, step by step",
}
BLOCK_LETTERS = "B batch · T tokens · C hidden size"


class PanelStep(NamedTuple):
    """A step as the panel lists it, for steps that are not a trace's (the block's, of its cached numbers)."""

    name: str
    stage: str
    formula: str
    shape: tuple[int, ...]


def block_steps(numbers) -> list[PanelStep]:
    """The block's steps (components/caches/past_attention.BlockNumbers), in the order the layer runs them."""
    return [PanelStep(name, "block", formula, tuple(shape))
            for name, formula, shape in zip(numbers.names, numbers.formulas, numbers.shapes, strict=True)]
_STYLE = style_tag(read_beside(__file__, "shapes_panel.css"))  # the panel's look, beside this module


def letters(shape, settings) -> str:
    """The letters the shapes are written in, for a model of this shape (attention.stages.settings.ModelShape)
    under these settings: n_kv too where K and V have fewer heads than Q (grouped-query attention: a Llama's trained
    weights), with how many of each, so that a learner reads K split's and Q split's shapes for what they say."""
    heads, kv_heads = settings.num_heads(shape), settings.num_kv_heads(shape)
    if kv_heads == heads:
        return "B batch · T tokens · C hidden size · nh heads · d head size"
    return (f"B batch · T tokens · C hidden size · nh query heads ({heads}) · n_kv key/value heads ({kv_heads}): K "
            f"and V have fewer heads than Q, each read by {heads // kv_heads} query heads · d head size")


def cache_lines(shape) -> tuple[str, ...]:
    """What each token adds to the key/value cache of a model of this shape (attention.stages.settings.ModelShape):
    2 (K and V) · L · n_kv · d · bytes, in float32 as the page computes and in bfloat16 as models are usually served;
    under grouped-query attention, against the same model with a key/value head for every query head. The model's
    own heads, whatever the settings: the cache is the trained model's."""
    size = CacheSize.of(shape)
    shared = size.smaller_by > 1
    heads = f"{size.num_kv_heads} key/value heads" if shared else f"{size.num_heads} heads"
    float32, bfloat16 = BYTES_PER_NUMBER["float32"], BYTES_PER_NUMBER["bfloat16"]
    lines = [f"Key/value cache per token: 2 (K, V) · {size.num_layers} layers · {heads} · d {size.head_size} · "
             f"{float32} bytes = {size.per_token('float32'):,} bytes in float32, as computed here; "
             f"{size.per_token('bfloat16'):,} in bfloat16 ({bfloat16} bytes a number), as models are usually served"
             + ("." if shared or shape.own_mask == "causal" else
                ". An encoder reads its text at once and keeps none: a decoder of its shape would.")]
    if shared:
        lines.append(f"Multi-head attention (a key/value head for each of the {size.num_heads} query heads): "
                     f"{size.multi_head_per_token('float32'):,} bytes ({size.multi_head_per_token('bfloat16'):,} in "
                     f"bfloat16). Sharing makes the cache {size.smaller_by}× smaller.")
    return tuple(lines)


def shape_rows(steps) -> list[tuple[str, str, str, str]]:
    """(stage, name, shape as Python prints a tuple, formula) for each step, in order."""
    return [(step.stage, step.name, str(tuple(step.shape)), step.formula) for step in steps]


def shapes_html(steps, letters: str, cache: tuple[str, ...] = ()) -> str:
    """One list item per step: name and shape on the first line, the formula under them (a narrow
    column wraps a list gracefully, where a three-column table would be cut off); under the letters, the cache's
    lines (cache_lines). Every text is escaped."""
    return f'{_STYLE}<div class="aa-shapes" data-testid="shapes-panel">{_lists(steps, letters, cache)}</div>'


def _lists(steps, letters: str, cache: tuple[str, ...] = ()) -> str:
    rows = shape_rows(steps)
    blocks = [f'<p class="letters">{html.escape(letters)}</p>',
              *(f'<p class="cache">{html.escape(line)}</p>' for line in cache)]
    for stage, title in STAGE_TITLES.items():
        items = [f"<li><code>{html.escape(name)}</code> <code>{html.escape(shape)}</code><br>"
                 f'<span class="formula"><code>{html.escape(formula)}</code></span></li>'
                 for s, name, shape, formula in rows if s == stage]
        if items:
            blocks.append(f'<p class="stage">{html.escape(title)}</p><ul>{"".join(items)}</ul>')
    return "".join(blocks)


def per_step_html(per_step: dict[int, object], letters: str, step: int, cache: tuple[str, ...] = ()) -> str:
    """The panel of a view of steps whose computations differ (the guided lesson's): one list for each set of
    steps with the same steps of the trace, each marked with those steps (data-steps="1 3 4"). The browser shows
    the list of the step it shows, as the body's data-lesson-step says (components/views/parts/lesson_nav.py sets
    it the moment a step is pressed, before the server hears of it); step's, before that script has run."""
    lists: dict[tuple, list[int]] = {}
    for each, steps in per_step.items():
        lists.setdefault(tuple(shape_rows(steps)), []).append(each)
    blocks = [f'<div class="for-steps" data-steps="{" ".join(map(str, numbers))}">'
              f"{_lists(per_step[numbers[0]], letters, cache)}</div>" for numbers in lists.values()]
    attribute = f"data-{STEP_ATTRIBUTE}"
    shown = [f'body[{attribute}="{each}"] .aa-shapes .for-steps[data-steps~="{each}"]' for each in per_step]
    shown.append(f'body:not([{attribute}]) .aa-shapes .for-steps[data-steps~="{step}"]')
    style = f"<style>.aa-shapes .for-steps{{display:none}} {', '.join(shown)}{{display:block}}</style>"
    return f'{_STYLE}{style}<div class="aa-shapes" data-testid="shapes-panel">{"".join(blocks)}</div>'


def shapes_panel(steps, letters: str, expanded: bool = True, per_step: dict[int, object] | None = None,
                 step: int = 1, shape=None) -> None:
    """steps: a trace's steps or its outline's, in an expander that folds the panel's 1,300 px away. Drawn as
    HTML, not Markdown: the panel changes with every head, and the browser re-parsed its Markdown on every
    move (20 ms of a 40 ms floor here). per_step: for a view of steps that compute with settings of their own
    (the lesson's step 2 is the identity, unscaled), each step's steps instead of steps, the panel following the
    step shown (per_step_html), step the one shown first. shape: the model's (ModelShape), whose key/value cache
    per token the panel weighs under the letters (cache_lines)."""
    cache = cache_lines(shape) if shape is not None else ()
    with st.expander("Tensor shapes", expanded=expanded, icon=":material/data_array:"):
        st.html(shapes_html(steps, letters, cache) if per_step is None else
                per_step_html(per_step, letters, step, cache))
