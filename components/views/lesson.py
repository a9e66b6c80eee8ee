"""The guided lesson: the notebooks' walk through self-attention, one step at a time, on the current text.

Each step shows a formula, live charts, the shapes involved and a few sentences whose every
number is computed (attention.analyses.lesson), so the text never claims what the charts do not show.
The step lives in the URL (step=1, 2, …), so a teacher can project one step from a link. Which steps there are
depends on the model (components/page/lesson_steps.py): a Llama's lesson has two more, its rotary positions and
its shared key and value heads, after the projections.
Tokens and texts typed by the user reach the page only inside charts, tables or code spans.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from attention.analyses.lesson import (
    diagonal_wins,
    falling_layers,
    head_block,
    masked_cells,
    row_sum_error,
    strongest_keys,
    twin_wins,
)
from components.caches import texts
from components.charts.chart_summaries import describe_line, describe_map
from components.charts.colour_ranges import robust_bound
from components.charts.draw import show
from components.page.downloads import chart_downloads
from components.page.lesson_steps import SIMPLIFIED
from components.page.page_state import shorten
from components.page.tables import numbers_html
from components.page.view_list import VIEWS
from components.views.parts.lesson_kit import (
    explain,
    formula,
    heatmap_in,
    model_lesson,
    numbers,
    pair_starts,
    shapes_table,
    step_number,
    trained,
    two_heatmaps,
)
from components.views.parts.lesson_moves import moves_step
from components.views.parts.lesson_nav import foot, navigation, step_key, title
from components.views.parts.lesson_pair import compared_pair
from components.views.parts.lesson_past import block_step, next_token_step
from components.views.parts.lesson_rotary import rotary_step, shared_step
from components.views.parts.scrubbed import said

SCALING_LATEX = {"none": "", "sqrt": r"/\sqrt{d_k}", "linear": "/d_k", "temperature": r"/\tau"}




def render(context) -> None:
    """The navigation, then every step's container, the current step drawn in its own (its own Previous and Next at
    its foot), and its neighbours in theirs in the run the page's script asks for when the page is still
    (lesson_nav); the browser shows the current step alone. The current step is drawn first."""
    lesson = model_lesson(context)
    step, drawn = navigation(lesson, loading=context.model_name != context.state.model)
    containers = {each: st.container(key=step_key(each)) for each in range(1, len(lesson) + 1)}
    for each in drawn:
        with containers[each]:
            title(each, lesson)
            STEP_RENDERERS[lesson[each - 1]](context)
            foot(each, len(lesson))
            if each == len(lesson):
                _onward(context)


def _onward(context) -> None:
    """The end of the lesson: a link to every other view of the page, with this text, and what each is for."""
    st.subheader("Where next", anchor=False)
    lines = []
    for view in VIEWS:
        if view.name != "lesson":
            what = f": {view.purpose}." if view.purpose else ""
            lines.append(f"- [{view.label}]({context.link(view=view.name, step=1)}){what}")
    st.markdown("\n".join(lines))


def _tokens_step(context) -> None:
    trace = context.trace()
    tokens = list(trace.tokens[0])
    formula(context, r"\text{text} \xrightarrow{\text{tokenizer}} \text{input\_ids}",
             r"\xrightarrow{\;E_{\text{token}}[\,\cdot\,]\;} \text{token embeddings}", between="")
    segments = {"segment": trace["token_type_ids"][0]} if "token_type_ids" in trace.names else {}  # BERT's pairs
    st.html(numbers_html(pd.DataFrame({"token": tokens, "id": trace["input_ids"][0], **segments}), "lesson-ids"))
    embeddings = trace["token embeddings"][0]  # (T, C)
    bound = robust_bound(embeddings)  # a few outlier dimensions would leave every other value pale
    heatmap_in(context, embeddings, tokens, numbers(context.shape.hidden_size),
             "Token embeddings E_token[input_ids]", "token-embeddings", row_title="token", column_title="dimension",
             scheme="redblue", second_sentence=pair_starts(trace, columns_too=False), download=True, clip_at=bound)
    shapes_table(trace, ["input_ids", "token embeddings"])
    what = "the sentence pair" if context.text_b.strip() else "the text"
    explain(f"The tokenizer cut {what} into {len(tokens)} tokens, special ones included; each id picks "
             f"one row of the token-embedding table, {context.shape.hidden_size} numbers per token.")

    first, second, found, why = compared_pair(context, "tokens")
    vectors = [context.trace(text=text, text_b="")["token embeddings"][0, index]  # (C,)
               for text, index in ((first, found.first_index), (second, found.second_index))]
    difference = vectors[0] - vectors[1]  # (C,)
    largest = float(np.abs(difference).max())
    word = shorten(found.word)
    st.caption(why)
    heatmap_in(context, np.stack([*vectors, difference]), [f"{found.word} in A", f"{found.word} in B", "A − B"],
             numbers(context.shape.hidden_size), "One token, two sentences: token embeddings and their difference",
             "homonym", row_title="vector", column_title="dimension", scheme="redblue", clip_at=bound)
    st.metric("Largest |A − B| over the dimensions", f"{largest:g}")
    ids = [context.encoding(text=text, text_b="").input_ids[0, index]
           for text, index in ((first, found.first_index), (second, found.second_index))]
    verdict = "exactly 0" if largest == 0 else f"{largest:g}"
    explain(f"A is {shorten(first, 60)} and B is {shorten(second, 60)}. {word} has id {ids[0]} in A and "
             f"{ids[1]} in B, and the largest difference between its two token embeddings is {verdict}: "
             "before attention, a token embedding does not depend on the sentence around it.")


def _identity_step(context) -> None:
    trace = context.trace(**SIMPLIFIED)
    tokens = trace.tokens[0]
    scores = trace["scores"][0]  # (T, T)
    formula(context, "Q = K = V = E", r"S = E\,E^{\top}, \quad s_{ij} = \vec e_i \cdot \vec e_j")
    heatmap_in(context, scores, list(tokens), list(tokens), "Scores E·Eᵀ (no projection, no scaling)",
             "identity-scores", scheme="redblue", second_sentence=pair_starts(trace), download=True)
    shapes_table(trace, ["layer_input", "Q", "scores"])
    layer_input = next(step.formula for step in trace.steps if step.name == "layer_input")
    wins = diagonal_wins(scores)
    sentences = [f"Here E is the input of layer {context.state.layer} ({layer_input}), used as query, key and value "
                 f"alike. In {wins} of {len(tokens)} rows the largest score is the token's score with itself, on "
                 "the diagonal."]
    repeated, on_copy = twin_wins(scores, tokens)
    if repeated:
        sentences.append(f"{repeated} rows belong to a token that occurs more than once; in {on_copy} of them the "
                         "next-largest score is on another copy of the same token.")
    projected, head = trained(context, quiet=True)
    trained_wins = diagonal_wins(projected["scores"][0])
    sentences.append(f"With the trained projections of layer {context.state.layer}, head {head} "
                     f"(step {step_number(context, 'projections')}), the "
                     f"diagonal holds the largest score in {trained_wins} of {len(tokens)} rows"
                     + (": projections let a token look for something other than itself." if trained_wins < wins
                        else "."))
    explain(*sentences)


def _projections_step(context) -> None:
    trace, head = trained(context)
    tokens = list(trace.tokens[0])
    formula(context, r"Q = X W_q^{\top} + b_q", r"K = X W_k^{\top} + b_k", r"V = X W_v^{\top} + b_v")
    dims = numbers(trace.head_size)
    for letter in "QKV":
        heatmap_in(context, trace[letter][0], tokens, dims, letter, f"projection-{letter.lower()}",
                 where=f"layer {context.state.layer}, head {head}", row_title="token",
                 column_title="dimension of the head", scheme="redblue",
                 second_sentence=pair_starts(trace, columns_too=False), download=letter == "Q")
    shapes_table(trace, ["layer_input", "Q (all heads)", "Q split", "Q", "K", "V"])
    gap = float(np.abs(trace["Q"][0] - trace["K"][0]).max())
    explain(f"All {trace.num_heads} heads are projected at once from X, {context.shape.hidden_size} numbers per "
             f"token, then split; head {head} keeps d = {trace.head_size} numbers per token for each of Q, K and V. "
             f"Q and K come from different weights (their largest difference here is {gap:.3g}), so in Q·Kᵀ "
             f"the diagonal holds a row's largest score in {diagonal_wins(trace['scores'][0])} of "
             f"{len(tokens)} rows.")


def _masking_step(context) -> None:
    trace, head = trained(context)
    tokens = list(trace.tokens[0])
    scaling = SCALING_LATEX[context.state.scaling]
    formula(context, rf"\tilde S = Q K^{{\top}}{scaling} + M,", r"M_{ij} \in \{0, -\infty\}", between=r"\quad")
    st.caption("M is 0 where query i may look at key j and −∞ where it may not: softmax turns −∞ into a weight of "
               "exactly 0.")
    masked, weights = masked_cells(trace["masked"][0]), trace["weights"][0]  # (T, T) each
    left, right, width = two_heatmaps(context, len(tokens))
    with left:
        mask_title = "Mask: 1 = may look, 0 = masked (−∞)"
        heatmap_in(context, (~masked).astype(np.float32), tokens, tokens, mask_title, "mask",
                   second_sentence=pair_starts(trace), width=width,
                   text=describe_map(mask_title, ~masked, tokens, tokens, "query token", "key token", "may look"))
    with right:
        heatmap_in(context, weights, tokens, tokens, "Weights = softmax(scaled + M)", "masked-weights",
                   second_sentence=pair_starts(trace), width=width, download=True)
    shapes_table(trace, ["scaled", "masked", "weights"])
    explain(*_masking_sentences(context, trace, head, masked, weights))


def _masking_sentences(context, trace, head: int, masked: np.ndarray, weights: np.ndarray) -> list[str]:
    """What the mask hides here, and what the weights would do under the other mask: every number computed."""
    family, state, cells = context.family, context.state, masked.size
    own = trace.mask_kind == context.shape.own_mask and state.mask == "model"
    whose = f"{family.label}'s own mask" if own else "The mask chosen beside this view (a what-if)"
    hides = {"none": "padding only, so every token looks both ways",
             "causal": "every key after its query, so every token looks back only",
             "window": f"every key after its query and more than {state.window} tokens back"}[trace.mask_kind]
    sentences = [f"{whose} hides {hides}: {int(masked.sum())} of {cells} cells are −∞ here, and their weights are "
                 f"exactly 0. Softmax spreads each row over the keys left, and the rows still sum to 1 (largest "
                 f"deviation {row_sum_error(weights):.1e})."]
    if trace.mask_kind == "causal":
        sentences.append(f"The first token can only look at itself: its whole weight, {weights[0, 0]:.3f}, stays on "
                         f"it. Trained this way, {family.label}'s heads park the weight they spend nowhere else on "
                         "that first token: the attention sink.")
    other = "none" if trace.mask_kind != "none" else "causal"
    changed = context.trace(source="bert", head=head, mask=other)["weights"][0]  # (T, T)
    ahead = float(np.triu(changed, 1).sum(axis=-1).mean())  # share of a row's weight on keys after its query
    if other == "none":
        sentences.append(f"With no mask (mask=none, a what-if), this head's queries would put {ahead:.0%} of their "
                         "weight on keys after them, on average: a decoder trained to predict the next token never "
                         "learnt what those keys mean.")
    else:
        later = float(np.triu(weights, 1).sum(axis=-1).mean())  # what this head puts on later keys, per row
        sentences.append(f"Under a causal mask (mask=causal, as GPT-2's), the {later:.0%} of each row's weight "
                         "this head puts on later keys, on average, would go to the keys "
                         "before: every weight above the diagonal 0, every row still summing to 1.")
    return sentences


def _softmax_step(context) -> None:
    trace, head = trained(context)
    tokens = list(trace.tokens[0])
    scaling = context.state.scaling
    formula(context, rf"A = \mathrm{{softmax}}\!\left(Q K^{{\top}}{SCALING_LATEX[scaling]}\right),",
             r"\sum_j a_{ij} = 1", between=r"\quad")
    scaled, weights = trace["scaled"][0], trace["weights"][0]  # (T, T) each
    left, right, width = two_heatmaps(context, len(tokens))
    with left:
        scaled_formula = next(step.formula for step in trace.steps if step.name == "scaled")
        heatmap_in(context, scaled, tokens, tokens, "Scaled scores", "scaled", where=scaled_formula,
                 scheme="redblue", second_sentence=pair_starts(trace), width=width)
    with right:
        heatmap_in(context, weights, tokens, tokens, "Weights = softmax(scaled)", "softmax",
                   second_sentence=pair_starts(trace), width=width, download=True)
    sums = weights.sum(axis=-1, dtype=np.float64)  # (T,)
    st.html(numbers_html(pd.DataFrame({"query token": tokens, "row sum": sums, "largest weight": weights.max(axis=-1)}),
                         "lesson-row-sums", formats={"row sum": "{:.7f}".format}))
    shapes_table(trace, ["scores", "scaled", "weights"])
    raw = trace["scores"][0]
    sentences = [f"Scaling divides the scores by {trace.divisor:.4g}: their range goes from "
                 f"{raw.min():.2f} … {raw.max():.2f} to {scaled.min():.2f} … {scaled.max():.2f}."
                 if scaling != "none" else
                 f"No scaling is chosen: the scores go into softmax as they are, {raw.min():.2f} … {raw.max():.2f}.",
                 f"Softmax makes every row a set of weights that sum to 1: the largest deviation of a row sum "
                 f"from 1 is {row_sum_error(weights):.1e}."]
    if scaling != "none":
        unscaled = context.trace(source="bert", head=head, scaling="none")["weights"][0]
        sentences.append(f"A row's largest weight averages {weights.max(axis=-1).mean():.2f} here and would average "
                         f"{unscaled.max(axis=-1).mean():.2f} without scaling: the larger the scores, the more "
                         "softmax piles the weight onto one key.")
    explain(*sentences)


def _head_step(context) -> None:
    trace, head = trained(context)
    tokens = list(trace.tokens[0])
    st.latex(rf"\mathrm{{head}}(X) = \mathrm{{softmax}}\!\left(Q K^{{\top}}{SCALING_LATEX[context.state.scaling]}"
             r"\right) V")
    heatmap_in(context, trace["weights"][0], tokens, tokens,
             "Weights", "head-weights", where=f"layer {context.state.layer}, head {head}",
             second_sentence=pair_starts(trace), download=True)
    bound = robust_bound(trace["concat"][0])  # the all-heads step's scale: there this context is a slice of the concat
    heatmap_in(context, trace["context"][0], tokens, numbers(trace.head_size), "Context = weights · V",
             "head-context", column_title="dimension of the head", scheme="redblue",
             second_sentence=pair_starts(trace, columns_too=False), clip_at=bound)
    st.caption(f"The context's colours end at ±{bound:.3g}, as step {step_number(context, 'heads')}'s concatenated "
               "contexts do, of which this "
               "head's context is one slice: a number has the same colour in both steps.")
    shapes_table(trace, ["weights", "V", "context"])
    counts = strongest_keys(trace["weights"][0], context.encoding().sinks[0])
    where = {"sink": f"a sink ({context.family.sink_words})", "self": "the token itself",
             "previous": "the previous token", "next": "the next token", "other": "some other token"}
    parts = [f"on {where[kind]} in {count}" for kind, count in counts.items() if count]
    explain(f"Each row shows where one query token looks. Its largest weight falls {', '.join(parts)} "
             f"of the {len(tokens)} rows.",
             f"The context of a token is the weighted mix of the value vectors: ({len(tokens)} × {len(tokens)}) · "
             f"({len(tokens)} × {trace.head_size}) gives {len(tokens)} vectors of {trace.head_size} numbers.")


def _all_heads_step(context) -> None:
    trace, head = trained(context)
    tokens = list(trace.tokens[0])
    formula(context, r"\mathrm{MultiHead}(X)",
             r"= \mathrm{Concat}(\mathrm{head}_0, \dots, \mathrm{head}_{n_h-1})\,W_o^{\top}", "+ b_o", between="")
    size, width = trace.head_size, trace["concat"].shape[-1]
    columns = [f"h{h}.{i}" for h in range(trace.num_heads) for i in range(size)]
    heatmap_in(context, trace["concat"][0], tokens, columns, "Concatenated contexts of all heads", "concat",
             column_title="head.dimension", scheme="redblue", second_sentence=pair_starts(trace, columns_too=False),
             clip_at=robust_bound(trace["concat"][0]))
    heatmap_in(context, trace["output"][0], tokens, numbers(context.shape.hidden_size),
             "Output = concat · W_oᵀ + b_o", "output", column_title="dimension", scheme="redblue",
             second_sentence=pair_starts(trace, columns_too=False), download=True,
             clip_at=robust_bound(trace["output"][0]))
    shapes_table(trace, ["context (all heads)", "concat", "output", "attention output"])
    block_gap = float(np.abs(head_block(trace["concat"][0], head, size) - trace["context"][0]).max())
    explain(f"The {trace.num_heads} heads' contexts, {size} numbers per token each, are put side by side: "
             f"{width} numbers per token. Columns {head * size} to {(head + 1) * size - 1} are head {head}'s "
             f"context from step {step_number(context, 'head')} (largest difference {block_gap:.1e}).",
             f"The output projection mixes the heads and maps {width} numbers back to "
             f"C = {context.shape.hidden_size}: {trace['concat'].shape} → {trace['output'].shape}.")


def _contextual_step(context) -> None:
    first, second, found, why = compared_pair(context, "context")
    similarities = texts.word_similarity_by_layer(context.model_name, first, found.first_index, second,
                                                    found.second_index)
    token_counts = [texts.encoding(context.model_name, text, "").num_tokens for text in (first, second)]
    hidden_size = context.shape.hidden_size
    st.latex(r"\cos(\vec a, \vec b) = \frac{\vec a \cdot \vec b}{\lVert \vec a \rVert\,\lVert \vec b \rVert}")
    st.caption(why)
    chart = similarity_chart(similarities, found.word, context.width)
    show(chart, key="lesson-similarity", lettering=context.lettering)
    said([describe_line(f"Cosine similarity of {found.word!r} in sentence A and sentence B, layer by layer",
                        similarities, similarity_stages(len(similarities)))])
    chart_downloads(lambda: chart, "lesson-similarity", f"lesson-similarity-{found.word}")
    layers = len(similarities) - 1
    st.markdown("| tensor | shape |\n|---|---|\n" + "\n".join(
        f"| `hidden_states[ℓ]` of {name} | `{(1, tokens, hidden_size)}` |"
        for name, tokens in zip("AB", token_counts, strict=True))
        + f"\n| one token's vector | `{(hidden_size,)}` |")
    explain(f"A is {shorten(first, 60)}, B is {shorten(second, 60)}; the chart compares the vector of "
             f"{shorten(found.word)} (token {found.first_index} in A, {found.second_index} in B) after each layer.",
             f"The cosine similarity is {similarities[0]:.3f} at the embeddings and {similarities[-1]:.3f} after "
             f"layer {layers}; it goes down in {falling_layers(similarities)} of the {layers} layers.",
             "Each layer mixes the other tokens of the word's own sentence into its vector, and those differ "
             "between A and B.")


def similarity_stages(count: int) -> list[str]:
    """Where each of count points of a word's similarity is measured: at the embeddings, then after each layer."""
    return ["at the embeddings", *(f"after layer {i}" for i in range(1, count))]


def similarity_chart(similarities: np.ndarray, word: str, width: int) -> alt.Chart:
    """(L + 1,) similarities -> a line over the layers, 0 being the embeddings, in a column width px wide."""
    frame = pd.DataFrame({
        "layer": np.arange(len(similarities)),
        "stage": similarity_stages(len(similarities)),
        "similarity": similarities,
    })
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("layer:O", title="layer (0 = embeddings)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("similarity:Q", title="cosine similarity", scale=alt.Scale(domain=[min(0.0, *similarities), 1.0])),
        tooltip=["stage:N", alt.Tooltip("similarity:Q", format=".4f")],
    ).properties(title=f"Cosine similarity of “{word}” in sentence A and sentence B", height=320,
                 width=max(160, min(480, width - 90)))


STEP_RENDERERS = {  # by the step's name (components/page/lesson_steps.STEP_TITLES)
    "tokens": _tokens_step,
    "identity": _identity_step,
    "projections": _projections_step,
    "rotary": rotary_step,
    "shared": shared_step,
    "mask": _masking_step,
    "softmax": _softmax_step,
    "head": _head_step,
    "moves": moves_step,
    "heads": _all_heads_step,
    "block": block_step,
    "context": _contextual_step,
    "next": next_token_step,
}
