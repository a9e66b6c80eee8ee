"""The logit lens (attention/analyses/logit_lens.py): its last layer is the model's own logits, read by transformers'
GPT2LMHeadModel, LlamaForCausalLM and BertForMaskedLM on tiny checkpoints built here; a model without a head is
refused by type.

The tiny GPT-2's weights are drawn 25 times wider than GPT-2's initialisation (as tests/core/test_next_token.py's),
so that its guesses are peaked, and the decoders' norms are given gains and biases drawn at random, so that a wrong
layer or a final norm left out or applied twice moves them past the tolerance.
Shapes: T tokens, P positions read, V vocabulary, L layers, k tokens kept.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.analyses.logit_lens import TABLE_COLUMNS, logit_lens
from attention.models.lm_heads import NoLanguageModelHead, load_language_model
from attention.models.loading import load_model
from attention.text.encoding import encode
from harness.checkpoints import gpt2_tokenizer, save_gpt2, tiny_llama
from tests.conftest import save_tiny_bert

TEXT = "The cat sat on the mat, and the dog"
TOLERANCE = dict(rtol=1e-4, atol=1e-6)  # probabilities: float32 logits summed in another order, then softmax


def with_drawn_norms(folder, model_class: str):
    """The checkpoint in folder with its norms' gains and biases drawn at random (initialised to 1 and 0, a norm
    applied twice reads as once, and a lens that forgot or doubled the final norm would pass)."""
    import transformers

    model = getattr(transformers, model_class).from_pretrained(folder)
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(2)
        for name, parameter in model.named_parameters():
            if "norm" in name.lower() or ".ln_" in name:
                parameter.copy_(torch.randn_like(parameter) * 0.5 + (1.0 if name.endswith("weight") else 0.0))
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    from transformers import GPT2Config

    tokenizer = gpt2_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=32, n_layer=3, n_head=4,
                        initializer_range=0.5, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id)
    return {"gpt2": with_drawn_norms(save_gpt2(tmp_path_factory.mktemp("peaked-gpt2"), config, tokenizer),
                                     "GPT2LMHeadModel"),
            "llama": with_drawn_norms(tiny_llama(tmp_path_factory.mktemp("tiny-llama")), "LlamaForCausalLM"),
            "bert": save_tiny_bert(tmp_path_factory.mktemp("tiny-mlm"), with_mlm_head=True)}


def reference_probabilities(name: str, folder, encoding) -> np.ndarray:
    """(T, V) softmax of transformers' own model with its head, on the same tokens."""
    import transformers

    model_class = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM", "bert": "BertForMaskedLM"}[name]
    model = getattr(transformers, model_class).from_pretrained(folder, attn_implementation="eager").eval()
    inputs = dict(input_ids=torch.from_numpy(encoding.input_ids),
                  attention_mask=torch.from_numpy(encoding.attention_mask))
    if name == "bert":
        inputs["token_type_ids"] = torch.from_numpy(encoding.token_type_ids)
    with torch.inference_mode():
        return model(**inputs).logits[0].softmax(-1).numpy()


@pytest.mark.parametrize("name", ["gpt2", "llama", "bert"])
def test_the_last_layer_is_the_models_own_logits(name, checkpoints):
    loaded = load_model(str(checkpoints[name]))
    text = "The cat sat on the [MASK]." if name == "bert" else TEXT
    encoding = encode(loaded, text)
    lens = logit_lens(load_language_model(str(checkpoints[name]), loaded), encoding, top_k=5)
    layers = loaded.shape.num_layers
    reference = reference_probabilities(name, checkpoints[name], encoding)[list(lens.positions)]  # (P, V)
    assert lens.top_ids.shape == (layers + 1, len(lens.positions), 5)
    # What the model itself gives the lens's last-layer tokens, and its own most probable token's probability
    np.testing.assert_allclose(np.take_along_axis(reference, lens.top_ids[-1], axis=-1), lens.top_probabilities[-1],
                               **TOLERANCE)
    np.testing.assert_allclose(reference.max(-1), lens.top_probabilities[-1, :, 0], **TOLERANCE)
    np.testing.assert_allclose(lens.prediction_probability[-1], lens.top_probabilities[-1, :, 0], rtol=1e-6)
    if name == "bert":
        assert lens.positions == (encoding.tokens[0].index("[MASK]"),)
    else:
        assert lens.positions == tuple(range(encoding.num_tokens))
        # Peaked weights: the earlier layers read otherwise than the last, or the test could not fail.
        assert not np.allclose(lens.top_probabilities[0], lens.top_probabilities[-1], atol=1e-3)


def test_first_layer_and_table(checkpoints):
    loaded = load_model(str(checkpoints["gpt2"]))
    lens = logit_lens(loaded, encode(loaded, TEXT), top_k=7)  # the head read from the checkpoint
    top_ones = lens.top_ids[:, :, 0]  # (L + 1, P)
    for index, first in enumerate(lens.first_layer):
        assert top_ones[first, index] == lens.prediction_ids[index]
        assert (top_ones[:first, index] != lens.prediction_ids[index]).all()
    rows = lens.table()
    assert len(TABLE_COLUMNS) == 4 and len(rows) == lens.top_ids.shape[0] * len(lens.positions) * 5
    layer, position, token, probability = rows[-5]
    assert (layer, position, token) == (loaded.shape.num_layers, lens.positions[-1], lens.top_tokens[-1][-1][0])
    assert probability == pytest.approx(float(lens.top_probabilities[-1, -1, 0]))
    assert all(a[3] >= b[3] for a, b in zip(rows[:4], rows[1:5], strict=True))
    with pytest.raises(ValueError, match="from 1 to 7"):
        lens.table(top=8)


def test_a_model_without_a_head_is_refused_by_type(bundled):
    with pytest.raises(NoLanguageModelHead, match="has no masked-language-model head"):
        logit_lens(bundled, encode(bundled, "The cat sat on the [MASK]."))


def test_bad_settings_name_the_valid_range(checkpoints):
    loaded = load_model(str(checkpoints["gpt2"]))
    encoding = encode(loaded, TEXT)
    with pytest.raises(ValueError, match="from 1 to 50"):
        logit_lens(loaded, encoding, top_k=0)
    with pytest.raises(ValueError, match=f"from 0 to {encoding.num_tokens - 1}"):
        logit_lens(loaded, encoding, positions=(encoding.num_tokens,))
