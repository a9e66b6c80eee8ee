"""The decoder views' text alternatives: the logit lens (charts/lens.describe_lens) and the generation view's step
and StreamingLLM charts (charts/generation.describe_rows) on the tiny GPT-2, the Rotation stage's pair and distance
charts (charts/rotary's describe_pair, describe_decay) on the tiny Llama (harness/checkpoints.py). Each says the
numbers its chart draws, the core's, and where transformers runs the same thing, transformers' (the lens's last layer,
a step's attention row); and each follows what moves its chart (the text, the Step and Layer inputs, the cache's
sinks, the query and the pair)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from attention.analyses.logit_lens import logit_lens
from attention.experiments.generation import GenerationSettings, StreamingSettings, generate, streaming_what_if
from attention.models.lm_heads import load_language_model
from attention.text.encoding import encode
from tests.page.test_chart_text_switch import NUMBER, close_to_two_figures, said_starting
from tests.pages import LLAMA_TEXT, assert_healthy, chart_texts, open_page, pick_on_chart

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
TEXT = "what if it rains tomorrow"
OTHER_TEXT = "the cat sat on the mat"
NEW_TOKENS = 8  # the page's default new_tokens


@pytest.fixture
def gpt2_folder(tiny_gpt2_checkpoint):
    """The session's tiny GPT-2 (tests/conftest.py)."""
    return tiny_gpt2_checkpoint


@pytest.fixture
def gpt2_link(gpt2_folder, monkeypatch):
    monkeypatch.setenv("ATTENTION_ANATOMY_MODEL_DIRS", str(gpt2_folder))
    return {"model": str(gpt2_folder), "text": TEXT}


def transformers_lm(folder):
    from transformers import GPT2LMHeadModel

    return GPT2LMHeadModel.from_pretrained(str(folder), attn_implementation="eager").eval()


def test_the_lens_says_where_the_final_guess_first_tops_and_its_last_probability_as_transformers_has_it(
        gpt2_link, gpt2_folder):
    page = open_page({**gpt2_link, "view": "lens"})
    assert_healthy(page)
    model = load_language_model(str(gpt2_folder))
    reference = transformers_lm(gpt2_folder)
    for text in (TEXT, OTHER_TEXT):
        if text != TEXT:
            page.text_area(key="text").set_value(text).run()
            assert_healthy(page)
        lens = logit_lens(model, encode(model.model, text))
        layers, last = lens.top_ids.shape[0] - 1, len(lens.positions) - 1
        with torch.inference_mode():
            logits = reference(torch.from_numpy(encode(model.model, text).input_ids)).logits[0, -1]  # (V,)
        probabilities = torch.softmax(logits, dim=-1)
        assert int(probabilities.argmax()) == int(lens.prediction_ids[last]), "the core's final guess, transformers'"
        shown = len(lens.positions)  # a short text: every position is drawn
        said = said_starting(page, f"The logit lens, rows 0 (the embeddings) to {layers} read at {shown} positions. "
                                   f"At position "
                                   f"{lens.positions[last]}, {lens.tokens[lens.positions[last]]!r}: the final top "
                                   f"token {lens.top_tokens[-1][last][0]!r} first becomes top at layer "
                                   f"{int(lens.first_layer[last])} of {layers}; at layer {layers} its probability is ")
        found = re.search(rf"its probability is ({NUMBER})\. The final guess is on top before the output at (\d+) of "
                          rf"{shown} positions\.$", said)
        assert found, said
        assert close_to_two_figures(float(found[1]), float(probabilities.max()))
        assert int(found[2]) == int((lens.first_layer < layers).sum())


def named_cells(said: str) -> list[tuple[int, str, int, float]]:
    """(head, key token, key position, weight) of each cell a step's text names, in order."""
    return [(int(head), key, int(position), float(value)) for head, key, position, value in
            re.findall(rf"head (\d+) → ('[^']*') \(token (\d+)\) ({NUMBER})", said)]


def assert_names_the_largest(said: str, weights: np.ndarray, keys: list[str], positions: tuple[int, ...]) -> None:
    """The cells said are the three largest of weights (nh, S) over the cached keys (their tokens and positions in
    the text), in order, with their values."""
    order = [divmod(int(index), weights.shape[1]) for index in np.argsort(-weights, axis=None, kind="stable")[:3]]
    named = named_cells(said)
    assert [(head, key, position) for head, key, position, _ in named] == [
        (head, repr(keys[column]), positions[column]) for head, column in order], said
    assert all(close_to_two_figures(value, weights[head, column])
               for (_, _, _, value), (head, column) in zip(named, order, strict=True))


def test_the_step_chart_says_the_new_tokens_largest_weights_and_follows_its_step_and_layer(gpt2_link, gpt2_folder):
    page = open_page({**gpt2_link, "view": "generate"})
    assert_healthy(page)
    model = load_language_model(str(gpt2_folder))
    generation = generate(model, TEXT, GenerationSettings(max_new_tokens=NEW_TOKENS, stop_at_end=False))
    reference = transformers_lm(gpt2_folder)
    ids = torch.tensor([[*generation.prompt_ids, *generation.new_ids]])  # (1, T + new)
    for index, layer in ((0, 0), (3, 0), (3, 1)):
        if index:
            page = pick_on_chart(page, "generate_row", decode_step=index)
        if layer:
            page.slider(key="generate_layer").set_value(layer).run()
        assert_healthy(page)
        step = generation.steps[index]
        fed, keys = generation.tokens[step.position], [generation.tokens[p] for p in step.cache_positions]
        said = said_starting(page, f"Generation step {index}{' (the prefill)' if index == 0 else ''}, layer {layer}: "
                                   f"the query of {fed!r}, token {step.position}: 4 heads over {len(keys)} cached "
                                   "keys. Largest weights: ")
        assert_names_the_largest(said, step.weights[layer], keys, step.cache_positions)
        with torch.inference_mode():  # the same row from transformers' whole pass over the text and its new tokens
            row = reference(ids[:, :step.position + 1], output_attentions=True).attentions[layer][0, :, -1]  # (nh, S)
        for head, _, position, value in named_cells(said):
            assert close_to_two_figures(value, float(row[head, position])), (head, position)


def test_the_streaming_charts_say_their_last_rows_and_follow_the_sinks(gpt2_link, gpt2_folder):
    page = open_page({**gpt2_link, "view": "generate"})
    assert_healthy(page)
    model = load_language_model(str(gpt2_folder))
    settings = GenerationSettings(max_new_tokens=NEW_TOKENS, stop_at_end=False)
    said_before = chart_texts(page)
    for sinks in (page.slider(key="sinks").value, 0):
        page.slider(key="sinks").set_value(sinks).run()
        assert_healthy(page)
        what_if = streaming_what_if(model, TEXT, StreamingSettings(sinks=sinks, window=page.slider(key="recent").value),
                                    settings)
        for run, name in ((what_if.kept, "first tokens kept"), (what_if.evicted, "first tokens evicted")):
            last = run.steps[-1]
            keys = [run.tokens[position] for position in last.cache_positions]
            said = said_starting(page, f"Last step, layer 0, {name}: 4 heads over {len(keys)} cached keys. ")
            assert_names_the_largest(said, last.weights[0], keys, last.cache_positions)
    assert chart_texts(page) != said_before


# ---- The Rotation stage, on the tiny Llama ----

def test_the_rotation_charts_say_the_pairs_turn_and_the_score_against_distance_and_follow_the_pair(llama_link):
    from attention.dissect.rotary_views import decay, head_turn, pair_picture
    from attention.dissect.trace import build_trace
    from attention.models.loading import load_model
    from attention.stages.settings import TraceSettings

    loaded = load_model(llama_link["model"])
    turn = head_turn(loaded, build_trace(loaded, encode(loaded, LLAMA_TEXT), TraceSettings(layer=1, head=3)))
    page = open_page({**llama_link, "layer": "1", "head": "3", "head_stage": "rotation"})
    assert_healthy(page)
    tokens = list(turn.tokens)
    query = page.selectbox(key="rotary_query").value
    for pair in (0, 3):
        if pair:
            page.slider(key="rotary_pair").set_value(pair).run()
            assert_healthy(page)
        picture = pair_picture(turn, query, 0, pair)
        said = said_starting(page, f"Pair {pair} (numbers {pair} and {pair + 4}) of q and k, turned: q of "
                                   f"{tokens[query]!r} at position {query} turns ")
        found = re.search(rf"turns ({NUMBER}) rad, k of {re.escape(repr(tokens[0]))} at 0 turns ({NUMBER}) rad; q's "
                          rf"pair is ({NUMBER}) long, k's ({NUMBER})\. It adds ({NUMBER}) to the raw score q·k = "
                          rf"({NUMBER})\.$", said)
        assert found, said
        expected = (query * picture.frequency, 0.0, np.linalg.norm(picture.query_before),
                    np.linalg.norm(picture.key_before), picture.pair_score, picture.score)
        assert all(close_to_two_figures(float(value), float(number)) if number else float(value) == 0
                   for value, number in zip(found.groups(), expected, strict=True)), (found.groups(), expected)

    curve = decay(turn, query, 0)
    said = said_starting(page, f"Score of this q and k against distance n = 0 to {int(curve.distances[-1])}: ")
    high, low = int(np.argmax(curve.scores)), int(np.argmin(curve.scores))
    found = re.search(rf": ({NUMBER}) at n = 0, highest ({NUMBER}) at n = {curve.distances[high]}, lowest ({NUMBER}) "
                      rf"at n = {curve.distances[low]}; at their distance in the text, {query}, ({NUMBER})\. A vector "
                      rf"of ones scored against itself: 1 at n = 0, ({NUMBER}) at n = {curve.distances[-1]}\.$", said)
    assert found, said
    for value, number in zip(found.groups(), (curve.scores[0], curve.scores[high], curve.scores[low],
                                              curve.scores[query], curve.fixed[-1]), strict=True):
        assert close_to_two_figures(float(value), float(number)), (value, number)

    page.selectbox(key="rotary_query").set_value(len(tokens) - 1).run()
    assert_healthy(page)
    moved = decay(turn, len(tokens) - 1, 0)
    found = re.search(rf"at their distance in the text, {len(tokens) - 1}, ({NUMBER})\.",
                      said_starting(page, "Score of this q and k against distance"))
    assert found and close_to_two_figures(float(found[1]), float(moved.scores[len(tokens) - 1]))
