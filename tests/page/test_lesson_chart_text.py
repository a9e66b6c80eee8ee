"""The lesson's charts say what they draw to a screen reader (charts/chart_summaries.py, written by scrubbed.said in
the step's own container, so that it is shown and hidden with the step): every chart of every step has its text;
a heatmap's names its size, range and largest cells as drawn; the head's weights and the token embeddings as
transformers has them, the block's bars, a word's similarity line, the mask, a GPT-2's guesses and a Llama's shared
heads as the core computes them; and the texts follow the layer moved beside the lesson and the step moved."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.analyses.context import similarity_by_layer
from attention.analyses.logit_lens import logit_lens
from attention.dissect.block import build_block
from attention.models.lm_heads import load_language_model
from attention.text.encoding import encode
from components.charts.spoken_numbers import figure
from harness.reference import bare_forward, transformers_model, transformers_tokenizer
from tests.page.test_lesson_steps_past_attention import open_lesson, transformers_top
from tests.page.test_view_lesson import STEP_CHARTS, current, run_lesson, step_shown
from tests.pages import TEXT, assert_healthy, chart_matrix, chart_texts, chart_title

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def step_texts(page) -> list[str]:
    """The text alternatives in the current step's container, unescaped, a paragraph each."""
    return chart_texts(current(page))


def text_of(page, start: str) -> str:
    [found] = [text for text in step_texts(page) if text.startswith(start)]
    return found


def largest_said(text: str) -> list[str]:
    """The numbers a heatmap's text gives its largest cells, in order: the last word of each cell."""
    return [cell.rsplit(" ", 1)[1] for cell in text.split("Largest: ", 1)[1].rstrip(".").split("; ")]


def transformers_tokens(bundled, text: str = TEXT) -> list[str]:
    tokenizer = transformers_tokenizer(bundled)
    return tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"])


@pytest.mark.parametrize("step", range(1, len(STEP_CHARTS) + 1))
def test_every_chart_of_every_step_says_what_it_draws(step):
    page = run_lesson(step=str(step))
    assert_healthy(page)
    assert_every_chart_said(page)


@pytest.mark.parametrize("step", ["4", "5"])
def test_every_chart_of_a_llamas_own_steps_says_what_it_draws(llama_link, step):
    """Its rotary positions and its shared heads."""
    assert_every_chart_said(open_lesson(llama_link, step=step))


def assert_every_chart_said(page) -> None:
    """A text a chart, in the step's container; a heatmap's size, range and largest cells are those it draws."""
    charts = current(page).get("vega_lite_chart")
    texts = step_texts(page)
    assert len(texts) == len(charts), (texts, [chart_title(chart) for chart in charts])
    for chart in charts:
        title = chart_title(chart)
        said = [text for text in texts if text.startswith(title)]
        if not said or "×" not in said[0]:  # not a heatmap: its text is checked below, by what it draws
            continue
        drawn = chart_matrix(chart, fill=np.nan)  # (R, C)
        said = text_of(page, title)
        assert f": {drawn.shape[0]} × {drawn.shape[1]}" in said, said
        if "Largest: " not in said:
            continue  # a map of 0 and 1, said by its counts: the mask's and the shared heads' own tests
        assert f"from {figure(np.nanmin(drawn))} to {figure(np.nanmax(drawn))}." in said, said
        largest = np.sort(np.abs(drawn[np.isfinite(drawn)]))[::-1][:3]
        assert [abs(float(value)) for value in largest_said(said)] == pytest.approx(largest, abs=0.006), said
        assert len(said) < 320, said


def test_the_heads_weights_are_transformers_and_follow_the_layer_and_the_step(bundled):
    page = run_lesson(step="6", layer="2", head="5")
    assert_healthy(page)
    tokens = transformers_tokens(bundled)

    def assert_transformers(layer: int) -> None:
        weights = bare_forward(bundled, TEXT)().attentions[layer][0, 5].numpy()  # (T, T)
        order = np.argsort(-weights, axis=None, kind="stable")[:3]
        cells = "; ".join(f"{tokens[i // len(tokens)]!r}, {tokens[i % len(tokens)]!r} {weights.flat[i]:.2f}"
                          for i in order)
        said = text_of(page, f"Weights, layer {layer}, head 5: 7 × 7 (query token × key token), from ")
        assert said.endswith(f"Largest: {cells}."), said

    assert_transformers(2)
    page.slider(key="layer").set_value(4).run()
    assert_healthy(page)
    assert_transformers(4)
    page.button(key="lesson_next").click().run()
    assert_healthy(page)
    assert step_shown(page) == 7
    assert text_of(page, "What moves α·‖f(x)‖, head 5: 7 × 7")
    assert not any(text.startswith("Weights, layer") for text in step_texts(page)), "step 6's texts went with it"


def test_the_token_embeddings_are_transformers(bundled):
    page = run_lesson(step="1")
    assert_healthy(page)
    ids = transformers_tokenizer(bundled)(TEXT, return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        embeddings = transformers_model(bundled).embeddings.word_embeddings(ids)[0].numpy()  # (T, C)
    tokens = transformers_tokens(bundled)
    order = np.argsort(-np.abs(embeddings), axis=None, kind="stable")[:3]
    rows, columns = np.unravel_index(order, embeddings.shape)
    cells = "; ".join(f"{tokens[row]!r}, dimension {column} {figure(embeddings[row, column])}"
                      for row, column in zip(rows, columns, strict=True))
    said = text_of(page, "Token embeddings E_token[input_ids]: 7 × 384 (token × dimension), ")
    assert f"from {figure(embeddings.min())} to {figure(embeddings.max())}. Largest: {cells}." in said


def test_the_mask_says_how_many_cells_each_query_may_see(bundled):
    page = run_lesson(step="4")
    assert_healthy(page)
    assert text_of(page, "Mask: ").endswith("7 × 7 (query token × key token), 49 of 49 cells may look. Every row: 7.")
    page = run_lesson(step="4", mask="causal")  # a what-if on a BERT: query i sees keys 0 … i
    assert_healthy(page)
    tokens = transformers_tokens(bundled)
    assert text_of(page, "Mask: ").endswith(f"28 of 49 cells may look. Fewest in a row: {tokens[0]!r}, 1; most: "
                                            f"{tokens[-1]!r}, 7.")


def test_the_blocks_bars_say_the_cores_numbers_as_the_block_view_does(bundled):
    page = run_lesson(step="9", layer="2")
    assert_healthy(page)
    written = {part: norms[0] for part, norms in build_block(bundled, encode(bundled, TEXT), 2).written().items()}
    tokens, residual = transformers_tokens(bundled), written["residual in"]  # (T,) each part
    writes = []
    for part, name in (("attention", "attention"), ("MLP", "the MLP")):
        top = int(written[part].argmax())
        writes.append(f"{name} writes most into {tokens[top]!r}, {figure(written[part][top])} against its "
                      f"residual's {figure(residual[top])}")
    longest = int(residual.argmax())
    assert text_of(page, "Layer 2, what each sublayer writes") == (
        f"Layer 2, what each sublayer writes into 7 tokens (‖·‖): {'; '.join(writes)}. The longest residual brought "
        f"in: {tokens[longest]!r}, {figure(residual[longest])}.")


def test_a_words_similarity_says_the_cores_numbers_and_follows_the_word_picked(bundled):
    other = "fruit flies like a banana"
    page = run_lesson(step="10", text_b=other)
    assert_healthy(page)
    first, second = encode(bundled, TEXT), encode(bundled, other)
    for word, index in (("flies", 2), ("like", 3)):  # the same position in both texts
        similarities = similarity_by_layer(first, index, second, index)  # (L + 1,)
        low = int(similarities.argmin())
        said = text_of(page, f"Cosine similarity of {word!r} in sentence A and sentence B, layer by layer: 7 points, ")
        assert said.endswith(f"{figure(similarities[0])} at the embeddings and {figure(similarities[-1])} after "
                             f"layer 6; lowest {figure(similarities[low])} after layer {low}, highest "
                             f"{figure(similarities.max())} at the embeddings."), said
        current(page).selectbox(key="lesson_word_context").set_value("like").run()
        assert_healthy(page)


def test_gpt2s_guesses_and_their_layers_are_transformers(tiny_gpt2_checkpoint, tiny_gpt2_model, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    text = "the cat sat on the mat"
    page = run_lesson(step="11", model=str(tiny_gpt2_checkpoint), text=text)
    assert_healthy(page)
    ids, probabilities = transformers_top(str(tiny_gpt2_checkpoint), text, tiny_gpt2_model)
    encoding = encode(tiny_gpt2_model, text)
    lens = logit_lens(load_language_model(str(tiny_gpt2_checkpoint), tiny_gpt2_model), encoding, 5,
                      positions=(len(encoding.tokens[0]) - 1,))
    assert lens.top_ids[-1, 0].tolist() == ids
    guesses = "; ".join(f"{token!r} {figure(p)}" for token, p in zip(lens.top_tokens[-1][0], probabilities,
                                                                        strict=True))
    said = text_of(page, "The model's top 5 guesses after the last token, ")
    assert said.endswith(f", by probability: {guesses}."), said
    line = lens.prediction_probability[:, 0]  # (L + 1,)
    said = text_of(page, "P(the final guess), the stream read through the head before each layer, the final guess "
                         f"{lens.top_tokens[-1][0][0]!r}: {len(line)} points, ")
    assert f"{figure(line[0])} before layer 0 and {figure(line[-1])} at the output;" in said, said


def test_a_llamas_shared_heads_say_which_key_and_value_head_each_query_head_reads(llama_link):
    page = open_lesson(llama_link, step="5", head="2")
    said = text_of(page, "Which key/value head each query head reads (1: reads it): ")
    # the tiny Llama: 4 query heads, 2 key/value heads, head h reading h // 2 (transformers' repeat_kv)
    assert said.endswith("4 × 2 (query head × key/value head), 4 of 8 cells read. query head 0: key/value head 0; "
                         "query head 1: key/value head 0; query head 2: key/value head 1; query head 3: key/value "
                         "head 1."), said
