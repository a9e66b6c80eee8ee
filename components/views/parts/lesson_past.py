"""The guided lesson's steps past the attention layer, on the student's own text: what the block does with the
attention's output (the residual stream, the norms and the MLP: attention/dissect/block.py, as the whole-block view
reads it), and the token the model guesses after the text (its language-model head on the last layer's output:
attention/analyses/logit_lens.py at the last token), or, for an encoder, why it guesses none and what it gives.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention.dissect.block import PLACEMENT_WORDS
from components.caches import lesson_extras, models, past_attention
from components.charts.block import describe_written, written_bars
from components.charts.chart_summaries import describe_line, describe_ranked
from components.charts.colour_ranges import robust_bound
from components.charts.draw import show
from components.charts.next_token import guess_bars, layer_line
from components.page.downloads import chart_downloads
from components.page.page_state import shorten
from components.views.parts.lesson_kit import explain, formula, heatmap_in, numbers, points, step_number, trained
from components.views.parts.scrubbed import said

BLOCK_FORMULAS = {  # (attention's half, the MLP's half) of a layer, by where its norms sit
    "post": (r"h = \mathrm{Norm}(x + \mathrm{Attention}(x))", r"x_{\ell+1} = \mathrm{Norm}(h + \mathrm{MLP}(h))"),
    "pre": (r"h = x + \mathrm{Attention}(\mathrm{Norm}(x))", r"x_{\ell+1} = h + \mathrm{MLP}(\mathrm{Norm}(h))"),
}


def block_step(context) -> None:
    layer = context.state.layer
    block = past_attention.block(context.model_name, context.text, context.text_b, layer)
    tokens = list(context.encoding().tokens[0])
    formula(context, *BLOCK_FORMULAS[block.placement], between=r"\qquad")
    width = max(200, context.width - 90)
    title = "‖residual in‖, ‖attention‖ and ‖MLP‖ per token"  # the layer in words: a move keeps the chart's spec
    chart = written_bars(block.written, tokens, title=title, width=width, lettering=context.lettering)
    show(chart, key="lesson-block-written", lettering=context.lettering)
    said([describe_written(layer, block.written, tokens)])  # the block view's words for the same bars
    chart_downloads(lambda: chart, "lesson-block-written", f"lesson-block-layer-{layer}",
                    title=f"Layer {layer}: {title}")
    st.caption("Grey: the residual stream a token brings into the layer; blue: what attention adds to it (every head "
               "through W_O); orange: what the MLP adds. "
               + ("For a post-norm model the MLP's add is measured against the normed stream."
                  if block.placement == "post" else ""))
    st.markdown("| step | shape | formula |\n|---|---|---|\n" + "\n".join(
        f"| `{name}` | `{tuple(shape)}` | `{step_formula}` |"
        for name, shape, step_formula in zip(block.names, block.shapes, block.formulas, strict=True)))
    placed, *found = _block_sentences(context, block)
    explain(placed)
    points(*found)


def _block_sentences(context, block) -> list[str]:
    """Where the norms sit, how much each part adds against the stream, and that the attention added is the
    all-heads step's output: every number off the block."""
    written, layer = block.written, block.layer
    tokens = context.encoding().tokens[0]
    attention_share = written["attention"] / written["residual in"]  # (T,)
    mlp_share = written["MLP"] / written["residual after attention"]  # (T,)
    heads_step = step_number(context, "heads")
    placed = PLACEMENT_WORDS[block.placement].format(norm=block.norm_name)
    sentences = [f"A {context.family.label} puts its {block.norm_name} {placed}.",
                 f"On this text, attention's output is on average {attention_share.mean():.0%} as long as the stream "
                 f"it is added to (from {attention_share.min():.0%} to {attention_share.max():.0%} a token), the "
                 f"MLP's {mlp_share.mean():.0%} (from {mlp_share.min():.0%}, to {mlp_share.max():.0%} at "
                 f"{shorten(tokens[int(mlp_share.argmax())])}): {_nudged(attention_share, mlp_share)}"]
    trace, _ = trained(context, quiet=True)
    own = context.state.scaling == "sqrt" and context.state.mask == "model"
    if own:
        attended = block.norms[block.names.index("attention")]  # (T,)
        gap = float(np.abs(np.linalg.norm(trace["output"][0], axis=-1) - attended).max())
        sentences.append(f"The attention added is step {heads_step}'s output: its lengths a token differ from it "
                         f"by at most {gap:.1e}.")
    else:
        sentences.append(f"The block runs the model's own √d_k and mask, whatever the scaling and mask beside this "
                         f"view, so its attention is step {heads_step}'s output under the model's own settings.")
    sentences.append(f"The layer's output is what layer {layer + 1} reads, and step "
                     f"{step_number(context, 'context')} follows a word's vector through every layer.")
    return sentences


def _nudged(attention_share: np.ndarray, mlp_share: np.ndarray) -> str:
    """What the shares say: how many tokens each part changes less than the stream it is added to."""
    tokens = len(attention_share)
    return (f"attention adds less than the stream carries at {int((attention_share < 1).sum())} of {tokens} tokens, "
            f"the MLP at {int((mlp_share < 1).sum())}. Where an output is the shorter, the token keeps much of what it "
            "brought; where it is the longer, the layer rewrites it.")


def next_token_step(context) -> None:
    if context.shape.own_mask != "causal":
        _encoder_step(context)
        return
    guess, why = lesson_extras.next_token(context.model_name, context.text, context.text_b)
    formula(context, r"P(t_{T+1} \mid t_1 \dots t_T)", r"= \mathrm{softmax}\!\left(\mathrm{Norm}(h_T)\,W_U^{\top}"
            r"\right)", between="")
    if guess is None:
        st.info(f"This decoder's checkpoint cannot guess the next token: {why}", icon=":material/info:")
        return
    lens, vocabulary = guess.lens, guess.vocabulary
    top_tokens, top = list(lens.top_tokens[-1][0]), lens.top_probabilities[-1, 0]  # (k,) most probable first
    width = max(200, context.width - 120)
    last = lens.tokens[lens.positions[0]]
    guesses_title = f"The model's top {len(top)} guesses after the last token"
    chart = guess_bars(top_tokens, top, title=guesses_title, width=width, lettering=context.lettering)
    show(chart, key="lesson-next-guesses", lettering=context.lettering)
    said([describe_ranked(f"{guesses_title}, {last!r}, by probability", top_tokens, top)])
    chart_downloads(lambda: chart, "lesson-next-guesses", "lesson-next-token")
    layers = len(lens.prediction_probability) - 1
    line_title = "P(the final guess), the stream read through the head before each layer"
    show(layer_line(lens.prediction_probability[:, 0], title=line_title, width=width), key="lesson-next-layers",
         lettering=context.lettering)
    said([describe_line(f"{line_title}, the final guess {top_tokens[0]!r}", lens.prediction_probability[:, 0],
                        [*(f"before layer {row}" for row in range(layers)), "at the output"])])
    hidden = context.shape.hidden_size
    st.markdown("| tensor | shape |\n|---|---|\n"
                f"| the last layer's output | `{(1, len(lens.tokens), hidden)}` |\n"
                f"| its last token's vector h_T | `{(hidden,)}` |\n"
                f"| scores h_T · W_Uᵀ, one a token of the vocabulary | `{(vocabulary,)}` |\n"
                f"| the top guesses | `{(len(top),)}` |")
    explain(f"After the last token, {shorten(last)}, the model's top guess is {shorten(top_tokens[0])} with "
            f"probability {_chance(top[0])}; its {len(top)} top guesses hold {top.sum():.0%} of the {vocabulary:,} "
            "tokens' probability.",
            "The head is the model's final norm and W_U"
            + (", which is the token embeddings of step 1 (tied)" if guess.tied else "")
            + f". Read through it, the stream before "
            f"layer 0 (the embeddings) gives the final guess {_chance(lens.prediction_probability[0, 0])}, the "
            f"output of layer {layers - 1} {_chance(lens.prediction_probability[-1, 0])}; it first tops the list "
            + _first_top(int(lens.first_layer[0])) + ".")
    lens_link, generate_link = context.link(view="lens", step=1), context.link(view="generate", step=1)
    points("Only the last token's vector is read: the vectors of the tokens before it guessed the token after "
           "each of them, one token of the text each, which is how a decoder trains on every position at once.",
           f"The Next token, layer by layer view reads every position so ([open it]({lens_link})); generation "
           f"repeats this step, a token at a time ([open it]({generate_link})).")


def _chance(probability: float) -> str:
    """A probability as a sentence gives it: three decimals, or two figures where those would read 0.000."""
    return f"{probability:.3f}" if probability >= 0.001 else f"{probability:.2g}"


def _first_top(row: int) -> str:
    """Where the lens's row (0: the embeddings, ℓ: the stream entering layer ℓ) reads, in words."""
    return "at the embeddings, before any layer" if row == 0 else f"after layer {row - 1}"


def _encoder_step(context) -> None:
    """An encoder guesses no next token: why, and the one vector a text it gives instead."""
    family = context.family
    formula(context, r"e = \frac{\bar h}{\lVert \bar h \rVert}, \quad \bar h = \frac{1}{T} \sum_t h^{(L)}_t")
    texts = (context.text, context.text_b) if context.text_b.strip() else (context.text,)
    embeddings = lesson_extras.text_embeddings(context.model_name, texts)  # (B, C)
    rows = ["text A", "text B"][:len(texts)] if len(texts) > 1 else ["the text"]
    heatmap_in(context, embeddings, rows, numbers(embeddings.shape[1]),
               "The text's embedding: its last layer's token vectors averaged, length 1", "text-embedding",
               row_title="", column_title="dimension", scheme="redblue", download=True,
               clip_at=robust_bound(embeddings))
    st.markdown("| tensor | shape |\n|---|---|\n"
                f"| the last layer's output | `{(1, context.encoding(text_b='').num_tokens, embeddings.shape[1])}` |"
                f"\n| its mean over the tokens, set to length 1 | `{(embeddings.shape[1],)}` |")
    _, why = models.language_model(context.model_name)
    mask_step = step_number(context, "mask")
    sentences = [f"A {family.label} is an encoder: every token looks both ways (step {mask_step}), so each vector "
                 "has already seen the tokens after it, and nothing in the model was trained to guess a token past "
                 "the text's end. A decoder (GPT-2, a Llama) looks back only and is trained to do just that: pick "
                 "one in the sidebar's model list to see this step guess."]
    if why is None:
        lens_link = context.link(view="lens", step=1)
        sentences.append("Its pretraining guessed words hidden behind [MASK] instead, and this checkpoint keeps that "
                         f"head: type [MASK] in the text and [the Next token view]({lens_link}) reads its guess "
                         "layer by layer.")
    else:
        sentences.append("This checkpoint keeps no language-model head at all: it was tuned to give one vector a "
                         f"text, the {embeddings.shape[1]} numbers above, for search and similarity: texts that mean "
                         "alike get vectors that point alike.")
    if len(texts) > 1:
        sentences.append(f"Here the cosine similarity of the two texts' vectors is "
                         f"{float(embeddings[0] @ embeddings[1]):.3f}.")
    explain(*sentences)
