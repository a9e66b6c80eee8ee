"""The main view: one head of one layer, stage by stage, as heatmaps.

The layer and the head are picked on the chart itself (components/charts/scrub.py): every head of the
text is in the browser, which draws the one picked as the reader drags or presses an arrow key;
the rest of the view follows after a short rerun. With a sentence pair, the weights can be narrowed
to one block (A to B, B to A, within A, within B: bertviz's sentence-pair view); the sink tokens ([CLS] and
[SEP] for BERT, the first token for GPT-2) can be hidden, the remaining weights renormalised. The masked scores,
a stage of their own, show the mask chosen beside the scaling: −∞ (grey) where a query may not look. What moves,
α_ij·‖f(x_j)‖ (Kobayashi et al. 2020), is a stage too, with ‖f(x_j)‖ of each key as bars under it; the weights can
be weighted by it, rows renormalised (AttentionViz's "weight by value norm").

Whole words (words=1) merge a word's pieces in the weights and the lines (attention/text/words.py): merged first, then
the pair filter and the sink toggle cut and renormalise the words. The scores and the context stay between
tokens, and say so: a sum or a mean of scores is no score softmax reads.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from components.assets import filled, read_beside, style_tag
from components.caches import layers, moves, stacks, texts
from components.charts.colour_ranges import head_domains
from components.charts.heatmap import MAX_VECTOR_CELLS, heatmap
from components.charts.label_room import label_overflow_px
from components.charts.lines import LINE_THRESHOLD, LINES_MOST, window
from components.charts.masked import unmasked
from components.charts.plot_sizes import MIN_PLOT_PX
from components.charts.scrub import STRIP, send_plan, strip_frame
from components.charts.token_axes import second_sentence_from
from components.page import controls
from components.page.downloads import chart_downloads, csv_download
from components.page.page_state import HEAD_STAGES, WEIGHT_SCALES
from components.page.tables import head_csv
from components.views.parts import rotary
from components.views.parts.in_place import caption_in_place
from components.views.parts.scrubbed import Strip, scrub_heatmap, scrub_lines
from components.views.parts.zoom import zoom_under

# Below this the from-scratch weights agree with transformers to float32 precision.
PROOF_TOLERANCE = 1e-5
# px of the window's height that the page head, the controls above the heatmap and its axes and legend take:
# what is left is the plot's, so that a 1280×720 projector shows three quarters of the heatmap unscrolled.
FIRST_SCREEN_ROOM_PX = 490
# The same in presentation mode, where the model's line is left out and the legend stands beside the plot.
PRESENTED_FIRST_SCREEN_ROOM_PX = 467
GUIDE_BESIDE_SHARE = 0.68  # of the view's column, for the chart, when its reading guide stands beside it
STAGES = tuple(label for name, label in HEAD_STAGES.items() if name != "rotation")  # rotary.stages adds it
STAGE_BUTTONS = dict(zip(STAGES, ("Weights", "Q·Kᵀ", "Scaled", "Masked", "Context", "Lines", "Moves"), strict=True))
# The core's name of what each stage draws; the lines draw the weights as bertviz does.
STAGE_NAMES = dict(zip(STAGES, ("weights", "scores", "scaled", "masked", "context", "lines", "moved"), strict=True))
# The stages whose weights merge into whole words (the others' numbers are no weights: they stay tokens).
WORD_STAGES = ("weights", "lines")
# The keys each kind of mask sets to −∞ (attention.stages.masks), for a reading guide.
MASKED_KEYS = {"none": "none here: it masks padding only, and one text has none",
               "causal": "the keys after the query",
               "window": "the keys after the query and those more than {window} tokens before it"}
SCORE_STAGES = ("scores", "scaled", "masked")  # any number: signed colours, and the legend's end named
DRAG_NOTE = ("Drag the Layer and Head sliders above the chart, or focus one and press the arrow keys: every head of "
             "this text is already in the browser.")
PAIR_LABELS = {"all": "all", "a_to_b": "A → B", "b_to_a": "B → A", "within_a": "within A", "within_b": "within B"}
# Streamlit's toolbar of a chart (show data, PNG, spec, fullscreen) hangs over the 47 px above the chart, at the
# chart's right end: over the Lines button when the chart is narrower than the column. The chart's box as wide as
# the column puts the toolbar at the column's right end, and keeps all its buttons; with seven stages the row of
# buttons reaches that end on a laptop, so the toolbar comes down into the chart's own top row, right of its Layer
# and Head inputs, where nothing stands: head_toolbar.css, beside this module, for each stage's chart.
_CHART_BOXES = ("", " > [data-testid='stFullScreenFrame']", " > [data-testid='stFullScreenFrame'] > div")
TOOLBAR_AT_COLUMN_END = style_tag(filled(
    read_beside(__file__, "head_toolbar.css"),
    charts=", ".join(f".st-key-chart-{name}{box}" for name in STAGE_NAMES.values() for box in _CHART_BOXES),
    toolbars=", ".join(f".st-key-chart-{name} [data-testid='stElementToolbar']" for name in STAGE_NAMES.values())))


def render(context) -> None:
    state = context.state
    outline = context.outline()  # the tokens, the heads and the scaling's formula: no number of the trace
    stem = re.sub(r"\W+", "-", f"layer {state.layer}, head {state.head}")  # "layer-2-head-5"

    sinks = context.family.sink_words  # "[CLS] and [SEP]", "the first token"
    # A head of random projections says so where the head is named, once: its numbers are no trained head's.
    head = f"random head {state.head} (seed {state.seed})" if state.source == "random" else f"head {state.head}"
    which, renormalise, whole = _filters(f"Layer {state.layer}, {head}", bool(context.text_b.strip()), sinks)
    controls.shared_heads_caption(context.shape, context.settings(), state.head)  # the chart picks the head

    def shown(merged: bool) -> Shown:  # the rows and keys left by the filters, in words or in tokens
        units = texts.text_words(context.model_name, context.text, context.text_b, merged)
        rows, keys = texts.visible_words(units, which, renormalise)  # (R,), (K,)
        segments = units.token_type_ids  # 1 for sentence B's words (or tokens)
        return Shown([units.labels[i] for i in rows], [units.labels[i] for i in keys],
                     (second_sentence_from([segments[i] for i in rows]),
                      second_sentence_from([segments[i] for i in keys])), merged)

    _stage(context, outline, shown, whole, which, renormalise, sinks, stem)
    proof_column, about_column = st.columns(2, gap="medium")
    with proof_column:
        _proof(context)
    with about_column:
        csv_download(functools.partial(_head_csv, context.model_name, context.text, context.text_b,
                                       context.settings()), f"attention-{stem}")
        st.caption("The whole head, one row per (query, key) pair: the scaled score, the masked score softmax "
                   "reads (-inf where the mask hides the key), the weight after it and what the key moves to the "
                   "query, α·‖f(x)‖ (alpha_fx_norm).")


class Shown(NamedTuple):
    """What a chart's rows and columns are: their labels, sentence B's first row and key, and whether in words."""

    rows: list[str]
    keys: list[str]
    second: tuple[int | None, int | None]
    words: bool


def _stage(context, outline, shown: Callable[[bool], Shown], whole: bool, which: str, renormalise: bool, sinks: str,
           stem: str) -> None:
    """The weights, or a stage before or after them: one chart, chosen with a row of buttons. shown: the rows and
    keys, in whole words (merged) or tokens; whole: whether words were asked for; sinks: the sink tokens' names.

    Only the chosen stage is computed and drawn. Buttons and not tabs: on every slider move the
    browser redrew the tabs for about 20 ms, a row of buttons for next to nothing.
    """
    stage = controls.stage_select(STAGES + rotary.stages(outline), STAGE_BUTTONS)
    if stage == rotary.ROTATION:  # q and k turned by position, where they are (components/views/parts/rotary.py)
        return rotary.render(context, outline)
    name = STAGE_NAMES[stage]
    words = whole and name in WORD_STAGES
    row_tokens, key_tokens, second, _ = labels = shown(words)
    caption_in_place("This stage shows tokens, not whole words: a sum or a mean of scores or of context vectors is "
                     "no number the head computes. Whole words merge the weights and the lines."
                     if whole and not words else None)
    if not row_tokens or not key_tokens:
        st.info("This filter leaves no tokens to show.")
        return
    st.html(TOOLBAR_AT_COLUMN_END)
    if name == "lines":
        _lines(context, outline, labels, which, renormalise, sinks)
        return
    columns = key_tokens if name != "context" else [str(i) for i in range(outline.head_size)]
    chart = st.container()  # drawn once the controls under it are chosen: the chart stays as high as it can
    weight_scale, by_value = (controls.weight_scale_select(), controls.value_norm_toggle()) if name == "weights" \
        else ("head", False)
    if name == "weights":
        title = stage + (" × ‖f(x)‖, rows renormalised" if by_value else "") + (
            " between whole words" if words else "") + (
            f" (renormalised without {sinks})" if renormalise else "")
    elif name in ("scaled", "masked"):
        title = f"{stage} = {outline.formula(name)}"  # masked: "scaled + M (−∞ at padding and keys after the query)"
    else:
        title = "Context = weights · V" if name == "context" else stage
    state, shape = context.state, (context.shape.num_layers, outline.num_heads)
    layers, heads = send_plan(*shape, len(row_tokens), len(columns), state.layer, state.head)
    stack = stacks.HeadStack(context.model_name, context.text, context.text_b, context.settings(layer=0, head=0), name,
                      layers, heads, which, renormalise, by_value, words)
    unit = "word" if words else "token"
    options = dict(scheme="blues" if name in ("weights", "moved") else "redblue", row_title=f"query {unit}",
                   column_title="dimension of the head" if name == "context" else f"key {unit}",
                   second_sentence=(second[0], None if name == "context" else second[1]))
    # As much of the chart on the first screen as the window's height allows, unless its tokens need more room
    # for every label: then as large as the column allows (a pair whose sentences differ in one word, labelled).
    labelled = len(row_tokens) if name == "context" else max(len(row_tokens), len(columns))
    every_label_px = labelled * context.lettering.label_spacing_px
    # On a projector the reading guide stands beside the chart, in the room its column has to spare.
    guide_beside = state.present and not context.stacked
    room = PRESENTED_FIRST_SCREEN_ROOM_PX if state.present else FIRST_SCREEN_ROOM_PX
    # Long words' labels take their room off the plot, below MIN_PLOT_PX if need be (44 px at most): on a phone,
    # the chart stays on the screen.
    # A plot past the lettering's largest where every label needs it and the column has the room (the Winograd
    # pair's 33 tokens: 429 px, where 420 labelled every other row, neither "it" among them).
    overflow = label_overflow_px(row_tokens, context.lettering)
    column_plot = context.plot_px(context.column_px(GUIDE_BESIDE_SHARE) if guide_beside else None,
                                  cap=max(context.lettering.largest_plot_px, every_label_px + overflow)) - overflow
    size = min(column_plot, max(MIN_PLOT_PX, context.height - room, every_label_px))
    at = layers.index(state.layer), heads.index(state.head)
    largest = None
    if name in SCORE_STAGES:  # the legend's end: the largest |score| the mask leaves
        matrix = stack.values()[at]  # (R, K)
        largest = float(np.abs(matrix[unmasked(matrix)]).max(initial=0.0))
    settings = context.settings()
    with chart:
        picture, beside = (st.columns([GUIDE_BESIDE_SHARE, 1 - GUIDE_BESIDE_SHARE], gap="medium") if guide_beside
                           else (st.container(), st.container()))
        with picture:
            scrub_heatmap(stack, row_tokens, columns, title=title, key=f"chart-{name}",
                          position=(state.layer, state.head), shape=shape, on_move=_follow_chart, size=size,
                          weight_scale=weight_scale, lettering=context.lettering, zoomable=True,
                          kept_rows=_query_rows(row_tokens, state.query),
                          about=stage + (" between whole words" if words else ""),
                          strip=_value_norm_strip(context, which, renormalise, key_tokens, layers, heads)
                          if name == "moved" else None, **options)
        beside.markdown(reading_guide(name, outline.head_size, state.scaling, outline.divisor, largest=largest,
                                      which=which, renormalise=renormalise, weight_scale=weight_scale,
                                      lab_link=context.link(view="lab"), sinks=sinks,
                                      mask=settings.mask_kind(context.shape), window=settings.window,
                                      value_norm=by_value, words=words))
    st.caption(DRAG_NOTE)

    def current_head():  # (R, K) of the page's layer and head, and its colours' range as the chart draws it
        values = stack.values()  # (nl, h, R, K)
        domain = head_domains(values, options["scheme"], weight_scale,
                              stack.with_heads(tuple(range(shape[1]))).values() if weight_scale == "layer" else None,
                              weights=name == "weights")
        return values[at], domain[at].tolist()

    def current_chart():  # for the downloads, built on click only, coloured as the chart on the page
        matrix, domain = current_head()
        return heatmap(matrix, row_tokens, columns, title=title, domain=domain, **options)

    if len(row_tokens) * len(columns) > MAX_VECTOR_CELLS:  # a picture: its cells are named in a zoom under it
        matrix, domain = current_head()
        zoom_under(f"chart-{name}", matrix, row_tokens, columns, title=title, domain=domain,
                   scheme=options["scheme"], row_title=options["row_title"], column_title=options["column_title"],
                   size=size, lettering=context.lettering)
    chart_downloads(current_chart, name, f"{name}-{stem}", title=f"{title} — {stem.replace('-', ' ')}")


def _query_rows(rows: list[str], query: int) -> tuple[int, ...]:
    """The rows whose labels a heatmap keeps whatever the step between them: the query picked (the neuron view's,
    carried in the link) and every row of the same word (the Winograd pair's two "it"s), where it is among them."""
    return tuple(index for index, token in enumerate(rows) if token == rows[query]) if 0 <= query < len(rows) else ()


def _lines(context, outline, shown: Shown, which: str, renormalise: bool, sinks: str) -> None:
    """The weights as bertviz draws them: a line from each query to each key, as opaque as its weight."""
    state, shape = context.state, (context.shape.num_layers, outline.num_heads)
    row_tokens, key_tokens, words = shown.rows, shown.keys, shown.words
    layers, heads = send_plan(*shape, len(row_tokens), len(key_tokens), state.layer, state.head, drawn_as="lines")
    stack = stacks.HeadStack(context.model_name, context.text, context.text_b, context.settings(layer=0, head=0),
                      "weights", layers, heads, which, renormalise, words=words)
    title = "Attention weights as lines" + (" between whole words" if words else "") + (
        f" (renormalised without {sinks})" if renormalise else "")
    start = 0
    longest = max(len(row_tokens), len(key_tokens))
    if longest > LINES_MOST:  # a window of the text: all of it would be thousands of px tall, its tokens unreadable
        start = st.slider("First token shown", 0, longest - LINES_MOST, key="lines_from",
                          help=f"The lines show {LINES_MOST} query tokens and {LINES_MOST} key tokens from here on.")
        queries, keys = window(len(row_tokens), start), window(len(key_tokens), start)
        title += f": queries {queries.start}–{queries.stop - 1}, keys {keys.start}–{keys.stop - 1}"
        st.caption(f"This text has {longest} tokens: the lines are drawn for {LINES_MOST} of them at a time. Lines "
                   "to keys outside the window are left out, so here a query's lines add up to less than 1.")
    scrub_lines(stack, row_tokens, key_tokens, key="chart-lines", position=(state.layer, state.head), shape=shape,
                on_move=_follow_chart, title=title, width=context.width, lettering=context.lettering, start=start)
    st.markdown(reading_guide("lines", outline.head_size, state.scaling, outline.divisor, which=which,
                              renormalise=renormalise, sinks=sinks, words=words))
    st.caption(DRAG_NOTE)


def reading_guide(name: str, head_size: int, scaling: str, divisor: float, *, largest: float | None = None,
                  which: str = "all", renormalise: bool = False, weight_scale: str = "head",
                  lab_link: str = "?view=lab", sinks: str = "the sink tokens", mask: str = "none",
                  window: int = 4, value_norm: bool = False, words: bool = False) -> str:
    """How to read the chart of one stage (a STAGE_NAMES value), in Markdown, true for that stage alone: what its
    rows, columns and colours are, and whether a row sums to 1. largest: the head's largest |value| as shown, the
    end of the legend (scores, scaled and masked scores); lab_link: the scaling lab with the page's text and
    settings; sinks: the sink tokens' names; mask, window: the kind of mask (attention.stages.masks) and its window;
    value_norm: the weights are weighted by ‖f(x_j)‖, rows renormalised; words: the weights (or lines) are between
    whole words."""
    hidden = MASKED_KEYS[mask].format(window=window)
    unit = "word" if words else "token"
    merged = (" A word the tokenizer split is one row and one column: its weight as a key is the sum over its "
              "pieces, its row the mean of its pieces' rows." if words else "")
    if name == "weights":
        zeros = f" The keys the mask hides ({hidden}) have a weight of exactly 0." if mask != "none" else ""
        weighted = (" Weighted by value norm: each weight is multiplied by ‖f(x_j)‖, the length of what its key hands "
                    "on, and each row rescaled to sum to 1 before anything else is cut out, as AttentionViz draws "
                    "it." if value_norm else "")
        return (f"**Reading it:** each row is one query {unit}; its colours show how it spreads its attention over "
                f"the key {unit}s across.{weighted} {_row_sums(which, renormalise, sinks)}{zeros}{merged} Colours "
                f"run from 0 to {WEIGHT_SCALES[weight_scale][1]}.")
    if name == "moved":
        return ("**Reading it:** each cell is α_ij·‖f(x_j)‖, the weight times the length of what key j hands query "
                "i, f(x_j) = (x_j W_V + b_V) W_O: how much of the key reaches the query, not how much the query looks. "
                "Rows do not sum to 1: a row's sum is the most its query could receive. Colours run from 0 (white) "
                "to this head's largest cell; the bars under it are ‖f(x_j)‖ of each key. Kobayashi et al. (2020) "
                "found that the weight BERT's heads park on [CLS], [SEP] and punctuation moves little: what those "
                "keys offer is short.")
    if name == "lines":
        return (f"**Reading it:** query {unit}s on the left, key {unit}s on the right; a line's opacity is its "
                f"weight (lines under {LINE_THRESHOLD:g} are left out). {_row_sums(which, renormalise, sinks)}"
                f"{merged} Point at a {unit} to see only its lines.")
    if name == "context":
        return (f"**Reading it:** each row is one query token's context vector, $\\sum_j a_{{ij}}\\,v_j$: the value "
                f"vectors of the keys, each weighted by this query's attention weight to that key. Its {head_size} "
                f"columns are the head's {head_size} dimensions, not tokens. Red below 0, blue above, as deep for −x "
                "as for +x.")
    symmetric = "Red below 0, blue above, as deep for −x as for +x."
    if name == "masked":
        return (f"**Reading it:** each cell is a scaled score plus the mask M: the score itself where the query may "
                f"look at the key, −∞ where it may not, drawn grey (the keys the mask hides: {hidden}). Softmax "
                f"turns −∞ into a weight of exactly 0, so each row's weights are shared among the keys it may see. "
                f"{symmetric} The colours run over the cells the mask leaves, whose largest |score| is "
                f"{largest:.3g}.")
    raw = (f"one query token's raw score with one key token, q·k over the head's {head_size} dimensions, before "
           "scaling and softmax")
    if scaling == "none":
        return (f"**Reading it:** each cell is {raw}: any number, and no row sums to 1. {symmetric} This head's "
                f"largest |score| is {largest:.3g}. No scaling is chosen, so Q·Kᵀ and Scaled are the same numbers; "
                f"[the scaling lab]({lab_link}) shows what dividing by √d_k, d_k or τ would change.")
    by = {"sqrt": f"√d_k = √{head_size} ≈ {divisor:.3g}", "linear": f"d_k = {head_size}",
          "temperature": f"τ = {divisor:g}"}[scaling]
    if name == "scores":
        what, other, ends = raw, "Scaled", (largest, largest / divisor)
    else:
        what = f"a raw score q·k divided by {by}, the number softmax turns into a weight once the mask is added"
        other, ends = "Q·Kᵀ", (largest * divisor, largest)
    return (f"**Reading it:** each cell is {what}: any number, and no row sums to 1. {symmetric} {other} looks the "
            f"same because each stage has its own colour scale: dividing by {by} takes this head's largest |score| "
            f"from {ends[0]:.3g} to {ends[1]:.3g} and changes only the legend. What it changes is softmax's "
            f"weights: [the scaling lab]({lab_link}) shows how.")


def _row_sums(which: str, renormalise: bool, sinks: str) -> str:
    """Whether a query's weights, as shown, sum to 1: they do, unless a block of a sentence pair is cut out."""
    if renormalise:
        over = "" if which == "all" else " over the keys shown"
        return f"Without {sinks}, each query's remaining weights are rescaled to sum to 1{over}."
    if which == "all":
        return "Softmax makes each query's weights sum to 1."
    return (f"Only the {PAIR_LABELS[which]} block is shown: a query's weights here are the share of its attention "
            "that goes to these keys, at most 1 together.")


def _value_norm_strip(context, which: str, renormalise: bool, key_tokens: list[str], layers: tuple[int, ...],
                      heads: tuple[int, ...]) -> Strip:
    """‖f(x_j)‖ of each key shown, in every head the Moves chart sends: the bars under it, picked with it in the
    browser (drawn apart, they were drawn anew by the rerun after every head move)."""
    _, keys = texts.visible_tokens(context.encoding(), which, renormalise)  # (K,)
    return Strip("‖f(x_j)‖ of each key", tuple(key_tokens), _value_norm_frames,
                 (context.model_name, context.text, context.text_b, context.settings(layer=0, head=0),
                  tuple(int(key) for key in keys), layers, heads))


def _value_norm_frames(model: str, text: str, text_b: str, settings, keys: tuple[int, ...], layers: tuple[int, ...],
                       heads: tuple[int, ...]) -> dict[str, pd.DataFrame]:
    """The strip's dataset: ‖f(x_j)‖ of the keys shown, (nl, h, K) over the layers and heads sent."""
    norms = np.stack([moves.layer_value_norms(model, text, text_b, dataclasses.replace(settings, layer=layer))
                      for layer in layers])[:, list(heads)][:, :, list(keys)]  # (nl, h, K)
    return {STRIP: strip_frame(norms, layers, heads)}


def _head_csv(model: str, text: str, text_b: str, settings) -> str:
    """The head as CSV, made on click from the cached trace: the button keeps these few plain values
    until then, not a copy of the trace (28 MB at 512 tokens on bert-base) for every open page."""
    trace = layers.trace(model, text, text_b, settings)
    return head_csv(list(trace.tokens[0]), trace["scaled"][0], trace["masked"][0], trace["weights"][0],
                    moves.head_moved(model, text, text_b, settings))


def _follow_chart(layer: int, head: int) -> None:
    """The reader moved the chart's own layer or head: the rest of the page follows in the rerun."""
    controls.request(layer=layer, head=head)


def _filters(heading: str, has_pair: bool, sinks: str) -> tuple[str, bool, bool]:
    """The heading with the sink-token and whole-word toggles beside it, one above the other (one row: the chart
    starts higher on a projector), and the pair filter under them; returns which block to show, whether to hide
    the sink tokens (named: sinks) and whether to merge words. The toggle keeps the link name hide_special, which
    older links hold."""
    heading_column, toggles = st.columns([3, 2], vertical_alignment="center")
    heading_column.subheader(heading, anchor=False)
    hide = controls.bound_widget(toggles.toggle, "hide_special", "Hide the sink tokens",
                                 help=f"A sink is a token where heads park the attention they spend nowhere else; "
                                      f"this model's are {sinks}. Hiding them drops them and rescales each row "
                                      "over the remaining keys, so that it sums to 1 again.")
    whole = controls.words_toggle(toggles)  # under it: the two labels beside the heading were cut short
    which = "all"
    if has_pair:
        which = controls.bound_widget(st.segmented_control, "pair", "Sentence pair: queries → keys",
                                      options=list(PAIR_LABELS), format_func=PAIR_LABELS.get, wrap=True)
    if hide:
        st.caption(f"Sinks hidden ({sinks}: tokens where heads park the attention they spend nowhere else): each "
                   "row's remaining weights are rescaled to sum to 1.")
    return which, hide, whole


def _proof(context) -> None:
    state = context.state
    if state.source != "bert":
        st.info("The proof compares against transformers' trained heads: choose the trained source.")
        return
    # A new server's first proof imports transformers' modelling code (seconds): the reader is told what is coming.
    with st.spinner("Checking this head against transformers' own attention code…"):
        proof = layers.proof(context.model_name, context.text, context.text_b, state.layer, state.head)
    verdict = "equal to float32 precision" if proof <= PROOF_TOLERANCE else "NOT equal"
    settings, shape = context.settings(), context.shape
    what_ifs = [trained for trained, chosen in (
        ("√d_k, the scaling the model was trained with", state.scaling != "sqrt"),
        ("the mask it was trained with", settings.mask_kind(shape) != shape.own_mask)) if chosen]
    note = ("The same head computed here from scratch against transformers' own attention code for this model."
            if not what_ifs else f"Measured with {' and '.join(what_ifs)}; the heatmaps show your what-if instead.")
    st.metric("Largest difference from transformers' own attention", f"{proof:.1e}",
              help="max |from-scratch weights − transformers' attention weights| over this head's matrix")
    st.caption(f"{verdict}. {note}")
