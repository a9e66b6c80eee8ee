"""The guided lesson's rotary numbers against transformers: one query and one key of the tiny Llama placed at every
pair of positions (attention/analyses/rotary_distance.py) are apply_rotary_pos_emb's, the head's own raw score
among them, one number a diagonal; and the lesson's pure helpers that read them.

Shapes: T tokens, d head size, nh query heads, n_kv key/value heads.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.analyses.lesson import by_distance, diagonal_spread, shared_by
from attention.analyses.rotary_distance import placed_scores
from attention.dissect.trace import build_trace
from attention.models.loading import load_model
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from harness.checkpoints import tiny_llama

TEXT = "The cat sat on the mat, and the dog watched it."


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return load_model(str(tiny_llama(tmp_path_factory.mktemp("tiny-llama"))))


def test_one_query_and_key_placed_everywhere_are_transformers_turn_and_hold_the_heads_own_score(llama):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    trace = build_trace(llama, encode(llama, TEXT), TraceSettings(layer=1, head=3))
    tokens = len(trace.tokens[0])
    query, key = trace["Q split"][0, 3, tokens - 1], trace["K split"][0, 1, 2]  # (d,) each: head 3 reads K head 1
    placed = placed_scores(query, key, llama.family.rotation(llama.model, tokens))  # (T, T)
    cos, sin = llama.model.rotary_emb(torch.zeros(1, tokens, 1), torch.arange(tokens)[None])  # (1, T, d) each
    turned_q, turned_k = apply_rotary_pos_emb(torch.from_numpy(query).expand(1, 1, tokens, -1),
                                              torch.from_numpy(key).expand(1, 1, tokens, -1), cos, sin)
    np.testing.assert_allclose(placed, (turned_q[0, 0] @ turned_k[0, 0].T).numpy(), rtol=1e-5, atol=1e-5)
    assert placed[tokens - 1, 2] == pytest.approx(float(trace["scores"][0, tokens - 1, 2]), abs=1e-5)
    assert diagonal_spread(placed) < 1e-5
    distances = by_distance(placed)  # (T,)
    np.testing.assert_allclose(distances, [placed[tokens - 1, tokens - 1 - gap] for gap in range(tokens)], atol=1e-5)
    assert np.ptp(distances) > 0.1, "the score changes with the distance"


def test_the_spread_of_a_diagonal_and_the_map_of_shared_heads():
    matrix = np.array([[1.0, 2.0, 3.0], [4.0, 1.5, 2.0], [5.0, 4.0, 1.0]])
    assert diagonal_spread(matrix) == pytest.approx(0.5)
    np.testing.assert_array_equal(by_distance(matrix), [1.0, 4.0, 5.0])
    np.testing.assert_array_equal(shared_by(np.array([0, 0, 0, 1, 1, 1]), 2),
                                  [[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]])
