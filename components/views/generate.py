"""Generation with a key/value cache: greedy decoding of the text's continuation, step by step. The prefill reads
the text at once; then each step feeds the token just guessed, whose one query row reads every cached key, while K
and V grow one row a step in every layer and Q is never cached. The cache's bytes for this model's heads (MHA, GQA,
MQA), and StreamingLLM's what-if: a cache of fixed size with the first tokens kept, or evicted. The numbers are
attention/experiments/generation.py's, through components/caches/past_attention.py; an encoder gets a notice.

Letters: L layers, nh query heads, n_kv key/value heads, S cached tokens, d head size, T the text's tokens.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention.stages.limits import PAGE_MAX_NEW_TOKENS, PAGE_STREAMING_SINKS, PAGE_STREAMING_WINDOW
from components.caches import chart_memos, past_attention
from components.charts.draw import draw_spec, show
from components.charts.generation import STEP, describe_rows, fits, step_row, steps_frames, steps_spec
from components.charts.label_stand_ins import stand_ins, with_labels
from components.charts.scrub import INPUT_STYLE, placed
from components.page import controls
from components.page.tables import numbers_html
from components.views.parts.number_table import number_table, tables_on_request
from components.views.parts.own_fragment import own_fragment
from components.views.parts.scrubbed import anchor_for, report_move, said

STEP_KEY, LAYER_KEY = "generate_step", "generate_layer"  # which step and layer are shown: not the link's
ROW_KEY = "generate_row"  # the step's chart, whose own Step input picks the step (a long text's: the Step slider)
_STEP_SHOWN = "_generate_step_shown"  # the step the chart's input last picked
_LAYER_MOVED = "_generate_layer_moved"  # set by the Layer slider's move, read once by the fragment it reruns
BYTES_PER_NUMBER = 4  # float32, as the core holds the cache


def attention_kind(num_heads: int, kv_heads: int) -> str:
    """What the cache's heads are called: every query head its own K and V (MHA), one shared by all (MQA), or
    groups (GQA)."""
    if kv_heads == num_heads:
        return f"multi-head attention (MHA): each of the {num_heads} query heads has its own K and V"
    if kv_heads == 1:
        return f"multi-query attention (MQA): the {num_heads} query heads share one K and one V"
    return (f"grouped-query attention (GQA): the {num_heads} query heads share {kv_heads} K and V heads, "
            f"{num_heads // kv_heads} each")


def render(context) -> None:
    family, shape = context.family, context.shape
    if family.own_mask != "causal":  # the family's own answer: it reads every token both ways
        st.info(f"{family.label} is an encoder: it reads every token both ways at once and was never trained to "
                "write the next one, so it does not generate. Load gpt2 or a SmolLM2 (the sidebar's model list) to "
                "watch a decoder fill its key/value cache.", icon=":material/info:")
        return
    control = st.columns(2)[0] if not context.stacked else st.container()
    with control:
        new_tokens = controls.bound_widget(st.slider, "new_tokens", "New tokens", min_value=PAGE_MAX_NEW_TOKENS.low,
                                           max_value=PAGE_MAX_NEW_TOKENS.high, help="Greedy decoding: the model's "
                                           "top token, one step through every layer each.")
    try:
        generation, why = past_attention.generation(context.model_name, context.text, new_tokens)
    except ValueError as error:  # a text that leaves the model no room
        st.warning(str(error), icon=":material/info:")
        return
    if generation is None:
        st.info(f"This model has no language-model head, so it cannot guess a next token: {why}",
                icon=":material/info:")
        return
    prompt = len(generation.prompt_ids)
    st.markdown("**The text and its continuation:**")
    st.text("".join(generation.tokens[:prompt]) + " ⟶ " + " · ".join(generation.tokens[prompt:]))
    _steps_table(generation, shape)
    _one_step(context, generation, shape, new_tokens)
    _streaming(context, new_tokens, prompt)


def _steps_table(generation, shape) -> None:
    prompt, d = len(generation.prompt_ids), shape.head_size
    rows = [{"step": index, "fed": "the text" if index == 0 else generation.tokens[step.position],
             "Q (per layer)": str((1, shape.num_heads, prompt if index == 0 else 1, d)),
             "K and V cached (per layer)": str((1, shape.kv_heads, len(step.cache_positions), d)),
             "cache (bytes)": step.cache_bytes, "next token": generation.tokens[step.position + 1],
             "P(next)": step.next_probability} for index, step in enumerate(generation.steps)]
    # A plain table, not the data grid: the grid cost the browser about 110 ms at every move (tables.numbers_html)
    st.html(numbers_html(pd.DataFrame(rows), "generate-steps", bars=("P(next)",),
                         formats={"P(next)": "{:.1%}".format, "cache (bytes)": "{:,}".format}))
    layers, kv, heads = shape.num_layers, shape.kv_heads, shape.num_heads
    st.caption(f"K and V gain one row a step in each of the {layers} layers; Q is never cached: a query is read once, "
               f"by the token that made it, so each step after the prefill computes one query row (1 × {d} per "
               f"head). This model uses {attention_kind(heads, kv)}. The cache holds 2 (K and V) · {layers} layers "
               f"· {kv} heads · S tokens · {d} · {BYTES_PER_NUMBER} bytes = {2 * layers * kv * d * BYTES_PER_NUMBER:,}"
               f" bytes a token" + (f", where a head of its own for each query head would take "
                                    f"{2 * layers * heads * d * BYTES_PER_NUMBER:,}" if kv != heads else "") + ".")


@st.fragment
def _one_step(context, generation, shape, new_tokens: int) -> None:
    """The step's query rows at a layer, and their Layer slider. Every step's rows at that layer are in the chart,
    its Step input above it (charts/generation.py): a step is drawn in the browser at once, and the chart's
    selection then reruns this fragment, which brings the caption up to it. A long text's row, too large to send
    every step's, is drawn one step at a time, picked with a Step slider. A fragment of its own: a step changes
    nothing else on the page. The Layer slider also picks the StreamingLLM maps' layer: a move of it reruns the
    page."""
    st.subheader("One step: the new token's query row against every cached key")
    layer = st.columns(2)[0].slider("Layer", 0, shape.num_layers - 1, 0, key=LAYER_KEY, on_change=_layer_moved)
    if st.session_state.pop(_LAYER_MOVED, False):
        st.rerun(scope="app")
    # Every step on the axes of the last one, the keys not yet cached left empty: one chart serves every step
    keys = tuple(generation.tokens[position] for position in generation.steps[-1].cache_positions)
    heads = tuple(str(head) for head in range(shape.num_heads))
    # The layer is said in the caption and the words, not the title: a title that named it would change the chart's
    # spec at every layer moved, and the browser would build the chart anew instead of swapping its numbers in
    title = "The new token's query row over the cache (grey: not cached yet)"
    size = context.plot_px(cap=max(320, 28 * len(keys)))
    if fits(len(generation.steps), len(heads), len(keys)):
        index = _steps_in_browser(context, generation, layer, heads, keys, title, size, new_tokens)
    else:
        index = st.slider("Step", 0, len(generation.steps) - 1, 0, key=STEP_KEY,
                          help="0 is the prefill (the text read at once); each later step feeds one new token.")
        show(step_row(_step_rows(generation, layer, len(heads), len(keys))[index], heads, keys, title, size,
                      context.lettering), key=ROW_KEY, lettering=context.lettering)
    step = generation.steps[index]
    fed = generation.tokens[step.position]
    cached = list(step.cache_positions)  # the keys drawn in colour
    said([describe_rows(f"Generation step {index}{' (the prefill)' if index == 0 else ''}, layer {layer}: the query "
                        f"of {fed!r}, token {step.position}", step.weights[layer],
                        [generation.tokens[position] for position in cached], cached)])
    tables_on_request(ROW_KEY, lambda: number_table(
        step.weights[layer], [f"head {head}" for head in heads],
        [f"{position}: {generation.tokens[position]}" for position in cached],
        caption=f"Step {index}, layer {layer}: the query row of token {step.position} over the cache",
        row_title="head", column_title="cached key"))
    st.caption(f"Step {index}, layer {layer}: the query row of token {step.position}, {fed!r}, over the "
               f"{len(step.cache_positions)} cached keys. Q of {fed!r}: (1, {shape.num_heads}, 1, "
               f"{shape.head_size}); K and V of the cache: (1, {shape.kv_heads}, {len(keys)}, {shape.head_size}), "
               "each K head read by "
               f"{shape.num_heads // shape.kv_heads} query head(s). The row sums to 1 over the cache; the guess "
               f"after it: {generation.tokens[step.position + 1]!r} at {step.next_probability:.1%}. Step 0 is the "
               "prefill (the text read at once); each later step feeds one new token.")


def _steps_in_browser(context, generation, layer: int, heads: tuple[str, ...], keys: tuple[str, ...], title: str,
                      size: int, new_tokens: int) -> int:
    """Draw every step's rows at layer in one chart whose Step input picks the step shown; return the step the
    page stands at (the reader's last pick, within this generation's steps)."""
    steps = len(generation.steps)
    index = min(st.session_state.get(_STEP_SHOWN, 0), steps - 1)
    standing = stand_ins(heads, keys)
    layout = (standing[heads], standing[keys], steps, title, size, context.lettering)
    numbers = (context.model_name, context.text, new_tokens, layer)  # all the rows hold: past_attention's key
    anchor = anchor_for(ROW_KEY, (numbers, layout), (index,))
    spec, labels_data = with_labels(placed(chart_memos.chart_spec(steps_spec, *layout), {STEP: anchor[0]}), standing)
    frames = {**chart_memos.chart_data_by_key(_steps_frames, ("generation steps", *numbers), generation, layer,
                                              len(heads), len(keys)), **labels_data}
    st.html(INPUT_STYLE)
    draw_spec(spec, frames, key=ROW_KEY, lettering=context.lettering,
              on_select=lambda: report_move(ROW_KEY, _step_moved, (STEP,)), selection_mode=[STEP])
    return index


def _steps_frames(generation, layer: int, heads: int, keys: int) -> dict:
    return steps_frames(_step_rows(generation, layer, heads, keys))


def _step_rows(generation, layer: int, heads: int, keys: int) -> np.ndarray:
    """Every step's query rows at layer over the last step's keys, NaN where a step has not cached the key yet."""
    rows = np.full((len(generation.steps), heads, keys), np.nan, dtype=np.float32)  # (n, nh, S of the last step)
    for index, step in enumerate(generation.steps):
        rows[index][:, list(step.cache_positions)] = step.weights[layer]  # (nh, S of this step)
    return rows


def _step_moved(step: int) -> None:
    """The chart's Step input moved: the caption under it follows."""
    st.session_state[_STEP_SHOWN] = step


def _layer_moved() -> None:
    """The Layer slider moved: the StreamingLLM maps below, outside the fragment, show that layer too."""
    st.session_state[_LAYER_MOVED] = True


@own_fragment(linked=True)
def _streaming(context, new_tokens: int, prompt: int) -> None:
    """The StreamingLLM what-if: a fragment of its own, as its two sliders change nothing above it. A move of one
    reruns it alone (the two runs of the what-if, a table and two maps, not the steps above), and writes the link
    and the class's view again."""
    st.subheader("StreamingLLM: a cache of fixed size, its first tokens kept or evicted")
    left, right = st.columns(2)
    with left:
        sinks = controls.bound_widget(st.slider, "sinks", "First tokens kept (sinks)",
                                      min_value=PAGE_STREAMING_SINKS.low, max_value=PAGE_STREAMING_SINKS.high)
    with right:
        window = controls.bound_widget(st.slider, "recent", "Last tokens kept (window)",
                                       min_value=PAGE_STREAMING_WINDOW.low, max_value=PAGE_STREAMING_WINDOW.high)
    what_if = past_attention.streaming(context.model_name, context.text, new_tokens, sinks, window)
    kept, evicted = what_if.kept, what_if.evicted
    st.html(numbers_html(pd.DataFrame({"cache": [f"first {sinks} kept + last {window}", f"last {sinks + window} only"],
                                       "continuation": [" · ".join(run.tokens[prompt:]) for run in (kept, evicted)]}),
                         "generate-streaming"))
    parted = ("The two guess the same tokens." if what_if.diverges_at is None else
              f"They part at new token {what_if.diverges_at}.")
    sink_share = float(what_if.sink_weight[-1].mean()) if sinks else 0.0
    st.caption(f"Both caches hold {sinks + window} entries; the text is read a token at a time within them, positions "
               f"re-assigned within the cache (Xiao et al. 2023). {parted} At the last step the kept first tokens "
               f"draw {sink_share:.0%} of the attention, averaged over every layer and head: the weight a head spends "
               "nowhere else, which evicting them hands to other tokens.")
    layer = st.session_state.get(LAYER_KEY, 0)
    places = st.columns(2) if not context.stacked else (st.container(),) * 2
    for place, run, name, key in ((places[0], kept, "first tokens kept", "generate_kept"),
                                  (places[1], evicted, "first tokens evicted", "generate_evicted")):
        last = run.steps[-1]
        with place:
            _last_row(context, run, last, layer, name, key)


def _last_row(context, run, last, layer: int, name: str, key: str) -> None:
    """The last step's query row of one run of the what-if, over its cache, at the layer chosen above. Its spec is
    kept by shape (chart_memos.kept_heatmap): a new text or another layer sends the numbers alone, the layer named
    over the chart rather than in its title."""
    keys = [run.tokens[position] for position in last.cache_positions]
    spec, frames = chart_memos.kept_heatmap(
        last.weights[layer], [str(head) for head in range(context.shape.num_heads)], keys,
        title=f"Last step, {name}", row_title="query head", column_title="cached key", domain=(0.0, 1.0),
        size=context.plot_px(context.column_px(0.5), cap=320), lettering=context.lettering)
    st.caption(f"Layer {layer}")
    draw_spec(spec, frames, key=key, lettering=context.lettering)
    said([describe_rows(f"Last step, layer {layer}, {name}", last.weights[layer], keys, list(last.cache_positions))])
