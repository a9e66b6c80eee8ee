"""What the Rotation stage draws, against transformers' own RoPE: a random head of a Llama turned with its own head
size, one pair of q and k before and after the turn and the circle it walks, the scores when every position moves
by Δ, and the score against distance. On the tiny Llama of harness/checkpoints.py (4 query heads of 8 sharing 2
key/value heads, RoPE of base 100,000, 128 positions), its trained heads and random ones.

Shapes: B batch, T tokens, nh heads, n_kv key/value heads, d head size, N + 1 distances.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from attention.dissect.outline import build_outline, turns_by_position
from attention.dissect.rotary_views import (
    DECAY_DISTANCES,
    MAX_SHIFT,
    decay,
    head_turn,
    pair_picture,
    shift_test,
)
from attention.dissect.trace import build_trace
from attention.models.loading import load_model
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from harness.checkpoints import tiny_llama

TEXT = "The cat sat on the mat, and the dog watched it."
# the settings the tests turn: trained heads (one reads a shared key head) and random heads of two sizes
TURNED = {"trained head 0": TraceSettings(layer=1, head=0), "trained head 3": TraceSettings(layer=0, head=3),
          "random d=16": TraceSettings(layer=1, head=1, source="random", head_dim=16, seed=2),
          "random d=4": TraceSettings(layer=0, head=5, source="random", head_dim=4, seed=1)}


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return load_model(str(tiny_llama(tmp_path_factory.mktemp("tiny-llama"))))


@pytest.fixture(scope="module")
def encoding(llama):
    return encode(llama, TEXT)


def their_rotary(llama, head_size: int):
    """transformers' own rotary embedding of the model's config at head size d: the model's own for its heads."""
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = copy.deepcopy(llama.model.config)
    config.head_dim = head_size
    return LlamaRotaryEmbedding(config)


def their_turn(llama, queries: torch.Tensor, keys: torch.Tensor, positions: torch.Tensor):
    """(T, d) queries and keys turned by transformers' apply_rotary_pos_emb at these positions (position_ids)."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    cos, sin = their_rotary(llama, queries.shape[-1])(queries, positions[None, :])  # (1, T, d) each
    turned_q, turned_k = apply_rotary_pos_emb(queries[None, None], keys[None, None], cos, sin)  # (1, 1, T, d)
    return turned_q[0, 0], turned_k[0, 0]


def test_a_random_head_of_a_llama_turns_by_its_own_head_size_and_the_models_base(llama, encoding):
    """θ_i = base^(−2i/d) for the random d, base = rope_theta of the config's rope_parameters (transformers 5), and q
    and k turned as transformers turns them at that head size."""
    settings = TURNED["random d=16"]
    trace = build_trace(llama, encoding, settings)
    tokens = encoding.num_tokens
    assert turns_by_position(llama.shape, settings)
    assert {"RoPE angles", "Q rotated", "K rotated"} <= set(trace.names)
    assert not {"K repeated", "shared head of each query head"} & set(trace.names)  # a key head for each query head
    base = llama.model.config.rope_parameters["rope_theta"]
    assert base == 100000.0
    frequencies = 1.0 / base ** (np.arange(0, 16, 2) / 16)  # (d/2,) in float64
    np.testing.assert_allclose(trace["RoPE angles"], np.arange(tokens)[:, None] * frequencies[None, :], rtol=1e-6)
    assert trace["RoPE angles"].shape == (tokens, 8)
    for head in range(trace.num_heads):
        theirs_q, theirs_k = their_turn(llama, torch.from_numpy(trace["Q split"][0, head]),
                                        torch.from_numpy(trace["K split"][0, head]), torch.arange(tokens))
        np.testing.assert_allclose(trace["Q rotated"][0, head], theirs_q.numpy(), rtol=0, atol=1e-6)
        np.testing.assert_allclose(trace["K rotated"][0, head], theirs_k.numpy(), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(trace["Q"][0], trace["Q rotated"][0, settings.head])
    np.testing.assert_array_equal(trace["K"][0], trace["K rotated"][0, settings.head])
    np.testing.assert_allclose(trace["scores"][0], trace["Q"][0] @ trace["K"][0].T, rtol=1e-5, atol=1e-5)
    outline = build_outline(llama.shape, encoding, settings)
    assert [(s.name, s.formula, s.shape) for s in outline.steps] == [(s.name, s.formula, s.shape) for s in trace.steps]


def test_the_identity_and_a_random_head_of_odd_size_stay_position_free(llama, encoding):
    """No projection (q = k = x) is the notebooks' position-free attention; an odd d has no pairs to turn."""
    for settings in (TraceSettings(source="identity"), TraceSettings(source="random", head_dim=5)):
        assert not turns_by_position(llama.shape, settings)
        names = set(build_trace(llama, encoding, settings).names)
        assert not {"RoPE angles", "Q rotated", "K rotated", "K repeated"} & names
        with pytest.raises(ValueError, match="position-free"):
            head_turn(llama, build_trace(llama, encoding, settings))


def test_a_bert_head_turns_nothing(bundled):
    trace = build_trace(bundled, encode(bundled, "time flies like an arrow"), TraceSettings())
    with pytest.raises(ValueError, match="position"):
        head_turn(bundled, trace)


@pytest.mark.parametrize("which", TURNED)
def test_the_pair_picture_is_the_traces_turn_and_keeps_lengths(llama, encoding, which):
    settings = TURNED[which]
    trace = build_trace(llama, encoding, settings)
    turn = head_turn(llama, trace)
    size, tokens = trace.head_size, encoding.num_tokens
    shared = settings.head // 2 if settings.source == "bert" else settings.head  # the key head this head reads
    np.testing.assert_array_equal(turn.queries, trace["Q split"][0, settings.head])  # (T, d) before the turn
    np.testing.assert_array_equal(turn.keys, trace["K split"][0, shared])
    assert turn.tokens == trace.tokens[0] and turn.head_size == size
    query, key = tokens - 1, 2
    for pair in (0, size // 4, size // 2 - 1):
        picture = pair_picture(turn, query, key, pair)
        numbers = [pair, pair + size // 2]  # rotate_half's pair: i and i + d/2
        np.testing.assert_array_equal(picture.query_before, trace["Q split"][0, settings.head, query, numbers])
        np.testing.assert_array_equal(picture.key_before, trace["K split"][0, shared, key, numbers])
        np.testing.assert_allclose(picture.query_after, trace["Q rotated"][0, settings.head, query, numbers],
                                   rtol=0, atol=1e-6)
        np.testing.assert_allclose(picture.key_after, trace["K"][0, key, numbers], rtol=0, atol=1e-6)
        assert picture.query_circle.shape == picture.key_circle.shape == (tokens, 2)
        np.testing.assert_allclose(picture.query_circle[query], picture.query_after, rtol=0, atol=1e-6)
        np.testing.assert_allclose(picture.key_circle[key], picture.key_after, rtol=0, atol=1e-6)
        # a turn keeps length: every point of the circle is as far from 0 as the pair before its turn
        np.testing.assert_allclose(np.linalg.norm(picture.query_circle, axis=1),
                                   np.linalg.norm(picture.query_before), rtol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(picture.key_circle, axis=1),
                                   np.linalg.norm(picture.key_before), rtol=1e-5)
        assert picture.frequency == pytest.approx(float(trace["RoPE angles"][1, pair]), rel=1e-6)
        assert picture.pair_score == pytest.approx(float(picture.query_after @ picture.key_after), rel=1e-5, abs=1e-6)
    # every pair's share adds up to the head's raw score q·k
    shares = sum(pair_picture(turn, query, key, pair).pair_score for pair in range(size // 2))
    assert shares == pytest.approx(float(trace["scores"][0, query, key]), rel=1e-4, abs=1e-5)
    assert pair_picture(turn, query, key, 0).score == pytest.approx(float(trace["scores"][0, query, key]),
                                                                      rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("which", TURNED)
@pytest.mark.parametrize("shift", [0, 1, 7, 100, 1000, MAX_SHIFT])
def test_moving_every_position_by_a_shift_changes_the_scores_by_float32_rounding_alone(llama, encoding, which,
                                                                                        shift):
    """The scores at positions p + Δ and p' + Δ against those at p and p', as transformers' apply_rotary_pos_emb
    computes them with position_ids moved by Δ: the same scores, and the same largest change, which is float32's
    rounding of the angles (p + Δ)·θ_i and so grows with Δ."""
    trace = build_trace(llama, encoding, TURNED[which])
    turn = head_turn(llama, trace)
    tested = shift_test(turn, shift)
    tokens = encoding.num_tokens
    queries, keys = torch.from_numpy(turn.queries), torch.from_numpy(turn.keys)
    positions = torch.arange(tokens)
    at_rest = their_turn(llama, queries, keys, positions)  # (T, d) each
    moved = their_turn(llama, queries, keys, positions + shift)
    # (T, T) each, multiplied by torch as shift_test does: numpy's BLAS sums in another order on some CPUs (AMD's),
    # a unit in the last place apart. The same float32 operations as transformers', the same rounding noise.
    theirs_rest, theirs_moved = ((turned[0] @ turned[1].T).numpy() for turned in (at_rest, moved))
    np.testing.assert_allclose(tested.scores, theirs_rest, rtol=0, atol=1e-6)
    np.testing.assert_allclose(tested.moved_scores, theirs_moved, rtol=0, atol=1e-6)
    np.testing.assert_allclose(tested.scores, trace["scores"][0], rtol=1e-5, atol=1e-5)
    theirs_change = float(np.abs(theirs_moved - theirs_rest).max())
    assert tested.largest_change == pytest.approx(float(np.abs(tested.moved_scores - tested.scores).max()))
    assert tested.largest_change == pytest.approx(theirs_change, rel=1e-3, abs=1e-6)
    # float32 rounding alone: an angle is off by at most half a unit in its last place, ulp(p + Δ) · θ_0 / 2 with
    # θ_0 = 1; q and k each turned that much off move a score by at most |q_pair|·|k_pair| times twice that, summed
    # over the pairs, below |q|·|k|·2·ulp; and a few float32 roundings of the sums.
    lengths = np.linalg.norm(turn.queries, axis=1).max() * np.linalg.norm(turn.keys, axis=1).max()
    bound = lengths * (2 * float(np.spacing(np.float32(tokens - 1 + shift))) + 1e-6)
    assert tested.largest_change <= bound
    assert tested.largest_score == pytest.approx(float(np.abs(tested.scores).max()))
    if shift == 0:
        assert tested.largest_change == 0.0


def test_a_shift_past_the_bound_is_refused_with_the_range(llama, encoding):
    turn = head_turn(llama, build_trace(llama, encoding, TURNED["trained head 0"]))
    for shift in (-1, MAX_SHIFT + 1):
        with pytest.raises(ValueError, match=f"from 0 to {MAX_SHIFT}"):
            shift_test(turn, shift)
    with pytest.raises(ValueError, match="pair"):
        pair_picture(turn, 0, 0, turn.head_size // 2)
    with pytest.raises(ValueError, match="query"):
        pair_picture(turn, encoding.num_tokens, 0, 0)


@pytest.mark.parametrize("which", TURNED)
def test_the_score_against_distance_is_transformers_turn_and_the_fixed_vector_decays(llama, encoding, which):
    """The chosen q turned to position n and k at 0, as transformers turns them: its score at the text's own
    distance is the head's score; and q = k = (1, …, 1) scored against itself, over its score at distance 0, is the
    mean of cos(n·θ_i) over the pairs."""
    trace = build_trace(llama, encoding, TURNED[which])
    turn = head_turn(llama, trace)
    query, key = encoding.num_tokens - 1, 1
    curve = decay(turn, query, key)
    most = min(DECAY_DISTANCES, llama.model.config.max_position_embeddings - 1)
    assert most == 127  # the tiny Llama's 128 positions
    np.testing.assert_array_equal(curve.distances, np.arange(most + 1))
    distances = torch.arange(most + 1)
    chosen_q, chosen_k = torch.from_numpy(turn.queries[query]), torch.from_numpy(turn.keys[key])  # (d,) each
    turned_q, _ = their_turn(llama, chosen_q.expand(most + 1, -1), chosen_k.expand(most + 1, -1),
                             distances)  # (N + 1, d): the query at position n
    _, turned_k = their_turn(llama, chosen_q[None], chosen_k[None], torch.zeros(1, dtype=torch.long))  # (1, d): at 0
    np.testing.assert_allclose(curve.scores, (turned_q @ turned_k[0]).numpy(), rtol=1e-5, atol=1e-5)
    assert curve.scores[query - key] == pytest.approx(float(trace["scores"][0, query, key]), rel=1e-4, abs=1e-4)
    assert curve.distance == query - key
    frequencies = np.float64(trace["RoPE angles"][1])  # (d/2,) θ_i: position 1's angles
    expected = np.cos(np.arange(most + 1)[:, None] * frequencies[None, :]).mean(axis=1)  # (N + 1,)
    np.testing.assert_allclose(curve.fixed, expected, rtol=0, atol=1e-4)
    assert curve.fixed[0] == pytest.approx(1.0)
    assert curve.fixed[-1] < 0.9  # the fast pairs no longer agree far apart


def test_a_key_after_the_query_has_no_distance_on_the_curve(llama, encoding):
    turn = head_turn(llama, build_trace(llama, encoding, TURNED["trained head 0"]))
    assert decay(turn, 1, 4).distance is None
