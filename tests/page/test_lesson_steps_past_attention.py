"""The guided lesson's steps of a Llama (its q and k turned by position, its query heads sharing fewer key and value
heads) and its steps past the attention layer (the block, the next token), driven through AppTest on the bundled
BERT, the tiny GPT-2 and the tiny Llama of harness/checkpoints.py: each step draws from its link, with numbers
equal to the core's and to transformers' own, and a BERT's or a GPT-2's lesson has no rotary step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.analyses.logit_lens import logit_lens
from attention.dissect.block import build_block
from attention.dissect.trace import build_trace
from attention.experiments.embedding_switch import sentence_embeddings
from attention.models.lm_heads import load_language_model
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from tests.page.test_view_lesson import (
    captions,
    chart,
    current,
    matrix_on_screen,
    panel_lists,
    prose,
    run_lesson,
    step_shown,
)
from tests.pages import LLAMA_TEXT, assert_healthy, chart_values, warnings

TEXT = LLAMA_TEXT
LLAMA_STEPS = {4: "Rotary positions", 5: "Shared heads", 11: "The block", 13: "The next token"}


@pytest.fixture(scope="module")
def llama(tiny_llama_checkpoint):
    from attention.models.loading import load_model

    return load_model(str(tiny_llama_checkpoint))


def titles(page) -> list[str]:
    """The step selector's labels, in order."""
    control = page.segmented_control(key="step")
    return [option.content for option in control.proto.options]


def transformers_top(checkpoint: str, text: str, tokenizer_model, top: int = 5) -> tuple[list[int], np.ndarray]:
    """The ids and probabilities of the top guesses after text of checkpoint's ...ForCausalLM, as transformers runs
    it (ids as the page's tokenizer encodes the text)."""
    from transformers import AutoModelForCausalLM

    reference = AutoModelForCausalLM.from_pretrained(checkpoint, attn_implementation="eager").eval()
    ids = torch.from_numpy(encode(tokenizer_model, text).input_ids)  # (1, T)
    with torch.inference_mode():
        chances = reference(input_ids=ids).logits[0, -1].softmax(-1)  # (V,)
    best = chances.topk(top)
    return best.indices.tolist(), best.values.numpy()


def test_a_bert_lesson_has_no_rotary_step_and_its_block_and_next_token_steps_come_last():
    page = run_lesson(step="9")
    assert_healthy(page)
    assert titles(page) == ["1 Tokens", "2 E·Eᵀ", "3 Q, K, V", "4 Mask", "5 Softmax", "6 One head", "7 What moves",
                            "8 All heads", "9 Block", "10 Context", "11 Next token"]
    assert set(panel_lists(page)) == set(range(1, 12))
    assert not any("RoPE angles" in listed for listed in panel_lists(page).values())
    assert current(page).subheader[0].value == "Step 9 of 11: The block: residual stream, norm and MLP"


def test_a_step_past_a_bert_lesson_is_its_last_with_a_notice():
    """step=12 is a Llama's (its lesson has 13 steps): on a BERT the link opens the last of its 11."""
    page = run_lesson(step="12")
    assert_healthy(page)
    assert "step=12 does not exist (this model's lesson has 11 steps: 1 to 11); showing step=11." in warnings(page)
    assert step_shown(page) == 11


def test_the_block_step_draws_what_each_part_adds_to_the_stream(bundled):
    page = run_lesson(step="9", layer="2")
    assert_healthy(page)
    block = build_block(bundled, encode(bundled, "time flies like an arrow"), 2)
    shown = chart_values(chart(page, "‖residual in‖"))
    for part, norms in block.written().items():
        if part != "residual after attention":
            drawn = shown[shown["part"] == part].sort_values("position")["norm"].to_numpy()
            np.testing.assert_allclose(drawn, norms[0], rtol=1e-5, atol=1e-6)
    written = block.written()
    share = written["attention"][0] / written["residual in"][0]
    assert f"attention's output is on average {share.mean():.0%} as long as the stream" in prose(page)
    assert "LayerNorm after each add (post-norm" in prose(page)
    assert "The attention added is step 8's output" in prose(page)
    assert "| `MLP` | `(1, 7, 384)` |" in prose(page)


def test_a_berts_next_token_step_says_why_there_is_none_and_draws_the_texts_embedding(bundled):
    page = run_lesson(step="11", text_b="fruit flies like a banana")
    assert_healthy(page)
    expected = sentence_embeddings(bundled, ["time flies like an arrow", "fruit flies like a banana"])  # (2, C)
    np.testing.assert_allclose(matrix_on_screen(page, "The text's embedding"), expected, atol=1e-6)
    said = prose(page)
    assert "A BERT is an encoder: every token looks both ways (step 4)" in said
    assert "keeps no language-model head at all" in said
    assert f"the cosine similarity of the two texts' vectors is {float(expected[0] @ expected[1]):.3f}" in said


def test_gpt2s_next_token_step_draws_the_models_own_top_guesses(tiny_gpt2_checkpoint, tiny_gpt2_model,
                                                                   monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(tiny_gpt2_checkpoint))
    page = run_lesson(step="11", model=str(tiny_gpt2_checkpoint), text="the cat sat on the mat")
    assert_healthy(page)
    assert len(titles(page)) == 11 and "RoPE" not in " ".join(titles(page))
    shown = chart_values(chart(page, "The model's top 5 guesses")).sort_values("rank")
    ids, probabilities = transformers_top(str(tiny_gpt2_checkpoint), "the cat sat on the mat", tiny_gpt2_model)
    np.testing.assert_allclose(shown["probability"], probabilities, rtol=1e-4, atol=1e-6)
    encoding = encode(tiny_gpt2_model, "the cat sat on the mat")
    lens = logit_lens(load_language_model(str(tiny_gpt2_checkpoint), tiny_gpt2_model), encoding, 5,
                      positions=(len(encoding.tokens[0]) - 1,))
    assert lens.top_ids[-1, 0].tolist() == ids
    assert f"the model's top guess is `{lens.top_tokens[-1][0][0]}` with probability {probabilities[0]:.3f}" \
        in prose(page)


def test_a_llamas_lesson_has_its_rotary_and_shared_steps_after_the_projections(llama_link):
    page = open_lesson(llama_link, step="3")
    assert titles(page) == ["1 Tokens", "2 E·Eᵀ", "3 Q, K, V", "4 RoPE", "5 Shared K, V", "6 Mask", "7 Softmax",
                            "8 One head", "9 What moves", "10 All heads", "11 Block", "12 Context", "13 Next token"]
    lists = panel_lists(page)
    assert set(lists) == set(range(1, 14))
    assert "RoPE angles" in lists[4] and "shared head of each query head" in lists[5]
    page.button(key="lesson_next").click().run()
    assert_healthy(page)
    assert (step_shown(page), page.query_params["step"]) == (4, "4")


def open_lesson(link: dict, **query: str):
    page = run_lesson(**link, **query)
    assert_healthy(page)
    assert current(page).subheader[0].value.startswith(
        f"Step {query['step']} of 13: {LLAMA_STEPS.get(int(query['step']), '')}")
    return page


def test_the_rotary_step_turns_q_by_position_and_its_scores_depend_on_the_distance_alone(llama_link, llama):
    """The angles and the turned query are the trace's; the map of one q and one k placed at every pair of
    positions is transformers' apply_rotary_pos_emb's, holds one number a diagonal, and the head's own score."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    page = open_lesson(llama_link, step="4", layer="1", head="3")
    trace = build_trace(llama, encode(llama, TEXT), TraceSettings(layer=1, head=3))
    tokens, last = len(trace.tokens[0]), len(trace.tokens[0]) - 1
    np.testing.assert_array_equal(matrix_on_screen(page, "Angle p·θ_i"), trace["RoPE angles"])
    query = matrix_on_screen(page, "Query of the last token")  # (2, d): before, after
    np.testing.assert_array_equal(query, np.stack([trace["Q split"][0, 3, last], trace["Q rotated"][0, 3, last]]))
    key = int(trace["weights"][0, last].argmax())
    placed = matrix_on_screen(page, "The same q and k placed")  # (T, T)
    assert f"Head 3, q of token {last} and k of token {key}" in captions(page), "which q and k, over the map"
    rotary = llama.model.rotary_emb
    positions = torch.arange(tokens)[None]  # (1, T)
    cos, sin = rotary(torch.zeros(1, tokens, 1), positions)  # (1, T, d) each
    q = torch.from_numpy(trace["Q split"][0, 3, last]).expand(1, 1, tokens, -1)  # (1, 1, T, d)
    k = torch.from_numpy(trace["K split"][0, 1, key]).expand(1, 1, tokens, -1)  # (1, 1, T, d): head 3 reads 1
    turned_q, turned_k = apply_rotary_pos_emb(q, k, cos, sin)  # (1, 1, T, d) each
    np.testing.assert_allclose(placed, (turned_q[0, 0] @ turned_k[0, 0].T).numpy(), atol=1e-5)
    assert placed[last, key] == pytest.approx(float(trace["scores"][0, last, key]), abs=1e-5)
    spread = max(float(np.ptp(np.diagonal(placed, offset))) for offset in range(1 - tokens, tokens))
    assert spread < 1e-5
    assert f"the scores differ by at most {spread:.1e}" in prose(page)
    angles = trace["RoPE angles"]
    assert f"Pair 0 turns by {angles[1, 0]:.3g} rad a position and pair 3 by {angles[1, -1]:.3g}" in prose(page)


def test_the_shared_step_maps_each_query_head_to_its_key_and_value_head(llama_link, llama):
    page = open_lesson(llama_link, step="5", head="2")
    np.testing.assert_array_equal(matrix_on_screen(page, "Which key/value head each query head reads"),
                                  [[1, 0], [1, 0], [0, 1], [0, 1]])
    encoding = encode(llama, TEXT)
    for head, title in ((2, "Weights of the head chosen"), (3, "Weights of the next head of its group")):
        weights = build_trace(llama, encoding, TraceSettings(head=head))["weights"][0]
        np.testing.assert_allclose(matrix_on_screen(page, title), weights, atol=1e-6)
        assert f"Head {head} (K/V head 1)" in captions(page), "which head, over its map"
    said = prose(page)
    assert "Q is cut into nh = 4 heads, K and V into n_kv = 2: query heads 0, 1 read 0; query heads 2, 3 read 1." \
        in said
    assert "K repeated's head 2 is K rotated's head 1, copied (largest difference 0)" in said
    assert "| `K split` | `(1, 2, 16, 8)` |" in said and "| `K repeated` | `(1, 4, 16, 8)` |" in said


def test_a_llamas_block_step_is_pre_norm(llama_link, llama):
    page = open_lesson(llama_link, step="11", layer="1")
    block = build_block(llama, encode(llama, TEXT), 1)
    shown = chart_values(chart(page, "‖residual in‖"))
    drawn = shown[shown["part"] == "MLP"].sort_values("position")["norm"].to_numpy()
    np.testing.assert_allclose(drawn, block.written()["MLP"][0], rtol=1e-5, atol=1e-6)
    assert "RMSNorm before each sublayer (pre-norm)" in prose(page)
    assert "The attention added is step 10's output" in prose(page)


def test_a_llamas_next_token_step_draws_the_models_own_top_guesses(llama_link, llama, tiny_llama_checkpoint):
    page = open_lesson(llama_link, step="13")
    shown = chart_values(chart(page, "The model's top 5 guesses")).sort_values("rank")
    _, probabilities = transformers_top(str(tiny_llama_checkpoint), TEXT, llama)
    np.testing.assert_allclose(shown["probability"], probabilities, rtol=1e-4, atol=1e-6)
    assert "W_U, which is the token embeddings of step 1 (tied)" in prose(page)
    assert "| the top guesses | `(5,)` |" in prose(page)
