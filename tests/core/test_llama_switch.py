"""A Llama's language-model head and the switch view's experiments on it: the next token's scores equal
LlamaForCausalLM's, and switching heads off runs through the family's own layer (RoPE, shared heads).
The real SmolLM2's guesses: tests/core/test_smollm2_gguf.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.experiments.head_switch import head_ranking, predict
from attention.models.lm_heads import load_language_model
from attention.models.loading import load_model
from harness.checkpoints import tiny_llama

TEXT = "The cat sat on the"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def test_the_next_tokens_scores_are_llama_for_causal_lms(folder):
    from transformers import LlamaForCausalLM

    language_model = load_language_model(str(folder), load_model(str(folder)))
    assert language_model.head.objective == "next"
    ids = torch.tensor([language_model.tokenizer.encode(TEXT).ids])  # (1, T)
    loaded = language_model.model
    with torch.inference_mode():
        theirs = LlamaForCausalLM.from_pretrained(folder).eval()(input_ids=ids).logits  # (1, T, V)
        inputs = loaded.family.forward(loaded.model, ids, torch.zeros_like(ids),
                                       torch.ones_like(ids))  # L + 1 x (1, T, C): layer ℓ's input at ℓ
        last = loaded.family.run_layer(loaded.model, 1, inputs[1], torch.ones_like(ids))  # (1, T, C): before the norm
        ours = language_model.logits(last)  # (1, T, V): the final RMSNorm and the tied embeddings
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


def test_switching_heads_off_changes_the_guess_and_ranks_every_head(folder):
    language_model = load_language_model(str(folder), load_model(str(folder)))
    intact = predict(language_model, TEXT)
    assert intact.top_probabilities[0] == pytest.approx(max(intact.top_probabilities))
    switched = predict(language_model, TEXT, heads_off=[(layer, head) for layer in range(2) for head in range(4)])
    assert switched.top_probabilities != intact.top_probabilities
    _, effects = head_ranking(language_model, TEXT)
    assert len(effects) == 2 * 4
