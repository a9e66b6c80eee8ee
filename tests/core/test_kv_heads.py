"""Which query heads share a key/value head, and the key/value cache's bytes per token (attention/stages/kv_heads.py),
against transformers: the formula's bytes are what a DynamicCache filled by a real Llama's forward pass holds, per
token, in float32 and in bfloat16, on a Llama of the tests' tiny shape (harness/checkpoints.py's tiny_llama: 2 layers,
4 query heads of 8 sharing 2) and on one of SmolLM2's attention shape (30 layers, 9 query heads sharing 3 of 64
numbers each). Both random and built in memory, their feed-forward and vocabulary cut to almost nothing, which the
cache never sees: no tokenizer or folder is needed to fill a cache.

Shapes: L layers, n_kv key/value heads, T tokens, d head size.
"""

from __future__ import annotations

import pytest
import torch

from attention.stages.kv_heads import BYTES_PER_NUMBER, CacheSize, SharedHeads, cache_bytes
from attention.stages.rotary import repeat_kv
from attention.stages.settings import ModelShape, TraceSettings

# SmolLM2-135M's config.json (and its GGUF's header): 30 layers, 9 query heads, 3 key/value heads, hidden size 576.
SMOLLM2 = ModelShape(num_layers=30, num_heads=9, hidden_size=576, family="llama", own_mask="causal", num_kv_heads=3)
IDS = [[5, 9, 2, 7, 11, 3]]  # six tokens


def random_llama(layers: int, heads: int, kv_heads: int, hidden_size: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=16, hidden_size=hidden_size, intermediate_size=4, num_hidden_layers=layers,
                         num_attention_heads=heads, num_key_value_heads=kv_heads)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return LlamaForCausalLM(config).eval()


def filled_cache_bytes_per_token(model, ids: list[list[int]]) -> float:
    """What the DynamicCache a forward pass of `ids` fills holds, keys and values of every layer, per token."""
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        model(torch.tensor(ids), past_key_values=cache, use_cache=True)
    assert len(cache.layers) == model.config.num_hidden_layers
    held = sum(layer.keys.nbytes + layer.values.nbytes for layer in cache.layers)  # each (1, n_kv, T, d)
    return held / len(ids[0])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_tiny_llamas_cache_holds_the_formulas_bytes_per_token(dtype):
    model = random_llama(layers=2, heads=4, kv_heads=2, hidden_size=32).to(getattr(torch, dtype))
    shape = ModelShape(num_layers=2, num_heads=4, hidden_size=32, family="llama", own_mask="causal", num_kv_heads=2)
    size = CacheSize.of(shape)
    assert filled_cache_bytes_per_token(model, IDS) == size.per_token(dtype) == 2 * 2 * 2 * 8 * BYTES_PER_NUMBER[dtype]


def test_smollm2s_cache_is_46080_bytes_a_token_in_float32_three_times_less_than_multi_head_attentions():
    """2 (K and V) · 30 layers · 3 key/value heads · 64 numbers · 4 bytes, measured in a real DynamicCache."""
    model = random_llama(layers=30, heads=9, kv_heads=3, hidden_size=576)
    size = CacheSize.of(SMOLLM2)
    assert filled_cache_bytes_per_token(model, IDS) == size.per_token("float32") == 46_080
    assert size.per_token("bfloat16") == 23_040
    assert size.multi_head_per_token("float32") == 138_240 and size.multi_head_per_token("bfloat16") == 69_120
    assert size.smaller_by == 3


def test_a_multi_head_models_cache_is_its_multi_head_figure():
    bert_base = ModelShape(num_layers=12, num_heads=12, hidden_size=768)
    size = CacheSize.of(bert_base)
    assert size.per_token("float32") == size.multi_head_per_token("float32") == 2 * 12 * 12 * 64 * 4
    assert size.smaller_by == 1


def test_cache_bytes_grows_with_the_tokens():
    assert cache_bytes(30, 3, 10, 64) == 10 * cache_bytes(30, 3, 1, 64) == 460_800
    assert cache_bytes(30, 3, 1, 64, BYTES_PER_NUMBER["bfloat16"]) == 23_040


def test_each_query_head_reads_the_key_value_head_repeat_kv_hands_it():
    """The groups are those of transformers' order: the copies repeat_kv makes of key/value head g are query heads
    g·(nh/n_kv) to (g + 1)·(nh/n_kv) − 1."""
    sharing = SharedHeads.of(SMOLLM2, TraceSettings())
    assert (sharing.num_heads, sharing.num_kv_heads, sharing.group_size, sharing.shared) == (9, 3, 3, True)
    keys = torch.arange(3.0).reshape(1, 3, 1, 1)  # (B, n_kv, T, d): key/value head g holds the number g
    repeated = repeat_kv(keys, 9)[0, :, 0, 0]  # (nh,)
    assert [sharing.kv_head(head) for head in range(9)] == repeated.int().tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert list(sharing.sharing(4)) == [3, 4, 5] and list(sharing.sharing(8)) == [6, 7, 8]


def test_the_toys_and_a_multi_head_model_share_nothing():
    assert not SharedHeads.of(SMOLLM2, TraceSettings(source="random", head_dim=64)).shared
    bert = SharedHeads.of(ModelShape(num_layers=2, num_heads=4, hidden_size=32), TraceSettings())
    assert not bert.shared and list(bert.sharing(2)) == [2]


def test_heads_that_do_not_split_evenly_are_refused():
    with pytest.raises(ValueError, match="9 query heads cannot share 2"):
        SharedHeads(num_heads=9, num_kv_heads=2)
