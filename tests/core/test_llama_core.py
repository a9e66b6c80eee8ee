"""The Llama family against transformers' own code: a tiny Llama (harness/checkpoints.py: 4 query heads sharing 2
key/value heads, RoPE) every layer and head, a tiny Qwen2 (biases on q, k, v), the rotation, the sharing of heads,
and what is refused. The real SmolLM2-135M-Instruct GGUF: tests/core/test_smollm2_gguf.py.

Shapes: B batch, T tokens, C hidden size, nh query heads, n_kv key/value heads, d head size, L layers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.dissect.heads import head_weights
from attention.dissect.outline import build_outline
from attention.dissect.parity import layer_reference, parity_report
from attention.dissect.trace import build_trace, layer_attention
from attention.models.families import FAMILIES
from attention.models.loading import load_model
from attention.stages.kv_heads import shared_head
from attention.stages.rotary import Rotation, repeat_kv
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode, encode_batch
from harness.checkpoints import gpt2_tokenizer, tiny_llama

TEXTS = [("The cat sat on the mat, and the dog watched it.", None), ("Time flies like an arrow.", None)]
# Two computations of the same numbers agree within float32 rounding (tests/conftest.py)
WEIGHTS_TOLERANCE = dict(rtol=1e-5, atol=1e-6)
VECTORS_TOLERANCE = dict(rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return load_model(str(tiny_llama(tmp_path_factory.mktemp("tiny-llama"))))


@pytest.fixture(scope="module")
def qwen2(tmp_path_factory):
    """A tiny Qwen2: Llama's attention with biases on q, k and v, 6 query heads sharing 2 (3 each)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = gpt2_tokenizer()
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=128,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    folder = tmp_path_factory.mktemp("tiny-qwen2")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)
        model = Qwen2ForCausalLM(config)
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if "proj" in name:  # weights and the biases of q, k, v: large enough that a head picks its keys
                    parameter.normal_(0.0, 0.2)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return load_model(str(folder))


def transformers_run(loaded, encoding):
    """What transformers' own forward pass computes with output_attentions=True, eager attention: every layer's
    weights (B, nh, T, T), and, caught on the way, every layer's context before W_O (B, T, nh·d) and attention
    block's output, W_O's output plus the layer's input (B, T, C)."""
    model, contexts, outputs = loaded.model, {}, {}
    hooks = []
    for index, layer in enumerate(model.layers):
        hooks.append(layer.self_attn.o_proj.register_forward_pre_hook(
            lambda module, args, index=index: contexts.__setitem__(index, args[0].detach().clone())))
        hooks.append(layer.self_attn.register_forward_hook(
            lambda module, args, result, index=index: outputs.__setitem__(index, result[0].detach().clone())))
    try:
        with torch.inference_mode():
            run = model(input_ids=torch.from_numpy(encoding.input_ids),
                        attention_mask=torch.from_numpy(encoding.attention_mask),
                        output_attentions=True, output_hidden_states=True)
    finally:
        for hook in hooks:
            hook.remove()
    residuals = [hidden.numpy() for hidden in run.hidden_states]  # L + 1 x (B, T, C)
    return ([weights.numpy() for weights in run.attentions], [contexts[i].numpy() for i in range(len(contexts))],
            [outputs[i].numpy() + residuals[i] for i in range(len(outputs))])


@pytest.mark.parametrize("which", ["llama", "qwen2"])
def test_every_head_of_every_layer_is_transformers_eager_attention(which, request):
    """The trace's weights, context and attention output, head by head, against transformers' own forward pass
    (LlamaAttention, Qwen2Attention: RoPE, repeat_kv, eager softmax), real tokens of a padded batch."""
    loaded = request.getfixturevalue(which)
    encoding = encode_batch(loaded, TEXTS)
    real = encoding.attention_mask.astype(bool)  # (B, T)
    weights, contexts, outputs = transformers_run(loaded, encoding)
    shape = loaded.shape
    assert shape.kv_heads < shape.num_heads
    for layer in range(shape.num_layers):
        for head in range(shape.num_heads):
            trace = build_trace(loaded, encoding, TraceSettings(layer=layer, head=head))
            np.testing.assert_allclose(trace["weights"][real], weights[layer][:, head][real], **WEIGHTS_TOLERANCE)
        np.testing.assert_allclose(trace["concat"][real], contexts[layer][real], **VECTORS_TOLERANCE)
        np.testing.assert_allclose(trace["attention output"][real], outputs[layer][real], **VECTORS_TOLERANCE)
        every_head = head_weights(layer_attention(loaded, encoding, TraceSettings(layer=layer)))  # (B, nh, T, T)
        np.testing.assert_allclose(every_head[0], weights[layer][0], **WEIGHTS_TOLERANCE)


def test_the_proof_agrees_with_transformers_and_torch(llama):
    """parity_report, as the page shows it: transformers' eager attention and torch's MultiheadAttention and SDPA,
    which are handed q and k turned and K and V shared (they know neither RoPE nor GQA)."""
    encoding = encode(llama, TEXTS[0][0])
    for layer in range(llama.shape.num_layers):
        report = parity_report(build_trace(llama, encoding, TraceSettings(layer=layer, head=1)),
                               layer_reference(llama, encoding, layer))
        assert max(report.values()) < 1e-5, report


def test_the_rotation_is_transformers_apply_rotary_pos_emb(llama):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    tokens, size = 11, llama.shape.head_size
    generator = torch.Generator().manual_seed(0)
    query = torch.randn(2, 4, tokens, size, generator=generator)  # (B, nh, T, d)
    key = torch.randn(2, 2, tokens, size, generator=generator)  # (B, n_kv, T, d)
    cos, sin = llama.model.rotary_emb(query, torch.arange(tokens)[None, :])  # (1, T, d) each
    theirs_q, theirs_k = apply_rotary_pos_emb(query, key, cos, sin)
    rotation = llama.family.rotation(llama.model, tokens)
    assert rotation.angles.shape == (tokens, size // 2)
    torch.testing.assert_close(rotation.rotate(query), theirs_q, rtol=0, atol=1e-6)
    torch.testing.assert_close(rotation.rotate(key), theirs_k, rtol=0, atol=1e-6)

    # The trace's own steps: q and k turned as transformers turns them
    encoding = encode(llama, TEXTS[0][0])
    trace = build_trace(llama, encoding, TraceSettings(layer=1))
    cos, sin = llama.model.rotary_emb(query, torch.arange(encoding.num_tokens)[None, :])
    theirs_q, theirs_k = apply_rotary_pos_emb(torch.from_numpy(trace["Q split"]), torch.from_numpy(trace["K split"]),
                                              cos, sin)
    np.testing.assert_allclose(trace["Q rotated"], theirs_q.numpy(), rtol=0, atol=1e-6)
    np.testing.assert_allclose(trace["K rotated"], theirs_k.numpy(), rtol=0, atol=1e-6)


def test_a_turn_keeps_lengths_and_scores_see_only_how_far_apart_two_tokens_are():
    """RoPE's point: |R_p q| = |q|, and (R_p q)·(R_p' k) depends on p − p' alone."""
    size, frequencies = 16, 100000.0 ** -(torch.arange(0, 16, 2).float() / 16)  # θ_i = base^(−2i/d)
    rotation = Rotation.of(frequencies, tokens=12)
    generator = torch.Generator().manual_seed(1)
    query, key = torch.randn(size, generator=generator), torch.randn(size, generator=generator)
    turned_q = rotation.rotate(query.expand(12, size))  # (T, d): the same query at every position
    turned_k = rotation.rotate(key.expand(12, size))  # (T, d)
    torch.testing.assert_close(turned_q.norm(dim=-1), query.norm().expand(12))
    scores = turned_q @ turned_k.T  # (T, T)
    for gap in range(-3, 4):
        along = torch.diagonal(scores, offset=gap)
        torch.testing.assert_close(along, along[0].expand_as(along), rtol=1e-4, atol=1e-4)
    assert not torch.allclose(torch.diagonal(scores, 0)[0], torch.diagonal(scores, 1)[0])


def test_query_heads_share_key_and_value_heads_as_repeat_kv_hands_them_out(llama):
    from transformers.models.llama.modeling_llama import repeat_kv as transformers_repeat_kv

    encoding = encode(llama, TEXTS[1][0])
    trace = build_trace(llama, encoding, TraceSettings(layer=0, head=3))
    np.testing.assert_array_equal(trace["shared head of each query head"], [0, 0, 1, 1])
    assert [shared_head(head, 4, 2) for head in range(4)] == [0, 0, 1, 1]
    for name, before in (("K repeated", "K rotated"), ("V repeated", "V split")):
        theirs = transformers_repeat_kv(torch.from_numpy(trace[before]), 2).numpy()  # (B, nh, T, d)
        np.testing.assert_array_equal(trace[name], theirs)
        np.testing.assert_array_equal(repeat_kv(torch.from_numpy(trace[before]), 4).numpy(), theirs)
    np.testing.assert_array_equal(trace["K"], trace["K rotated"][:, 1])  # head 3 reads shared head 1
    np.testing.assert_array_equal(trace["V"], trace["V split"][:, 1])
    np.testing.assert_array_equal(trace["Q"], trace["Q rotated"][:, 3])
    outline = build_outline(llama.shape, encoding, TraceSettings(layer=0, head=3))
    assert outline.formula("K") == "K = K repeated[:, 3] = K rotated[:, 1]"
    assert trace["K (all heads)"].shape[-1] == trace["Q (all heads)"].shape[-1] // 2  # W_K is (n_kv·d, C)


def test_the_toys_are_multi_head_attention_on_a_llama_and_the_identity_is_position_free(llama):
    """The random and identity projections are the notebooks' attention, a key head for each query head; a random
    head turns by position as the model's own do (tests/core/test_rotary_views.py), the identity (q = k = x) not."""
    encoding = encode(llama, TEXTS[1][0])
    random_names = set(build_trace(llama, encoding, TraceSettings(source="random", head_dim=8)).names)
    assert {"Q rotated", "K rotated", "RoPE angles"} <= random_names and "K repeated" not in random_names
    identity_names = set(build_trace(llama, encoding, TraceSettings(source="identity")).names)
    assert not {"Q rotated", "K repeated", "RoPE angles"} & identity_names


def test_what_the_family_does_not_compute_is_refused_with_its_reason():
    from transformers import LlamaConfig, MistralConfig, Qwen2Config

    llama = FAMILIES["llama"]
    small = dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=1)
    llama.check_config(LlamaConfig(**small))
    FAMILIES["mistral"].check_config(MistralConfig(**small, sliding_window=4096))
    FAMILIES["qwen2"].check_config(Qwen2Config(**small))
    refused = [
        (llama, LlamaConfig(**small, head_dim=16), "hidden size"),
        (llama, LlamaConfig(**{**small, "num_key_value_heads": 3}), "evenly"),
        (llama, LlamaConfig(**small, rope_parameters={"rope_type": "dynamic", "rope_theta": 1e4, "factor": 2.0}),
         "length"),
        (FAMILIES["mistral"], MistralConfig(**small, sliding_window=256), "sliding window"),
        (FAMILIES["qwen2"], Qwen2Config(**small, use_sliding_window=True, sliding_window=64, max_window_layers=0),
         "sliding window"),
    ]
    for family, config, reason in refused:
        with pytest.raises(ValueError, match=reason):
            family.check_config(config)


def test_the_first_token_is_the_sink_and_tokens_read_as_written(llama):
    encoding = encode_batch(llama, TEXTS)
    assert encoding.sinks[:, 0].all() and not encoding.sinks[:, 1:].any()
    assert encoding.tokens[0][:3] == ("The", "␣cat", "␣sat")  # byte-level BPE, a leading space as ␣
    assert llama.family.readable(["▁Time", "▁flies"]) == ("␣Time", "␣flies")  # a SentencePiece Llama's


def test_switching_every_head_on_gives_the_layer_transformers_runs(llama):
    """layer_with_heads_off with every head kept is the layer itself (the switch view's experiments)."""
    encoding = encode_batch(llama, TEXTS)
    real = encoding.attention_mask.astype(bool)
    hidden = torch.from_numpy(encoding.layer_input(1))
    mask = torch.from_numpy(encoding.attention_mask)
    with torch.inference_mode():
        _, layer_output = llama.family.layer_with_heads_off(llama.model, 1, hidden, mask, torch.ones(2, 4))
        theirs = llama.family.run_layer(llama.model, 1, hidden, mask)
        one_off = torch.tensor([[1.0, 0.0, 1.0, 1.0]] * 2)  # (B, nh): head 1 switched off
        _, head_off = llama.family.layer_with_heads_off(llama.model, 1, hidden, mask, one_off)
    np.testing.assert_allclose(layer_output.numpy()[real], theirs.numpy()[real], **VECTORS_TOLERANCE)
    assert not np.allclose(head_off.numpy()[real], theirs.numpy()[real], atol=1e-4)
