"""A decoder's key/value cache, and one forward step of new tokens through it.

A decoder's token never changes what an earlier token computed (the causal mask): the keys and values of the text
so far can be kept, and each new token computes its own query, key and value only, appends its K and V rows to
every layer's cache and reads the whole cache with its one query row. Q is never cached: a query is read once, by
the token that made it. Under grouped-query attention the cache holds n_kv key and value heads, not nh
(multi-query attention: one), which is what it saves: 2 · L · n_kv · T · d numbers.

Positions. GPT-2 adds a position's vector to the token's embedding, so a cached key carries its position in it.
A Llama turns q and k by their positions (RoPE). The cache keeps keys *before* their turn and turns them at each
step: by their position in the text (the plain cache: exactly the turned keys transformers caches), or, when
StreamingLLM's eviction re-assigns positions (Xiao et al. 2023), by their place in the cache, 0 to S − 1, with
the new query at the cache's end: the model then sees distances it saw in training, however long the text.

Letters used in shape comments: T tokens of the text so far, n new tokens of a step, S cached tokens, C hidden
size, nh query heads, n_kv key/value heads, d head size, L layers, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from attention.models.lm_heads import LanguageModel
from attention.stages.dot_product import merge_heads, split_heads
from attention.stages.rotary import Rotation, repeat_kv
from attention.stages.settings import scaling_divisor


@dataclass(eq=False)
class KeyValueCache:
    """Every layer's cached keys (before any turn) and values, with each entry's position in the text. Mutable:
    one generation grows it step by step and owns it alone."""

    keys: list[torch.Tensor] = field(default_factory=list)  # L x (1, n_kv, S, d)
    values: list[torch.Tensor] = field(default_factory=list)  # L x (1, n_kv, S, d)
    positions: list[int] = field(default_factory=list)  # (S,) each entry's position in the text

    def __len__(self) -> int:
        return len(self.positions)

    def size_bytes(self) -> int:
        """2 · L · n_kv · S · d · bytes per number: what the cache holds."""
        return sum(tensor.numel() * tensor.element_size() for tensor in (*self.keys, *self.values))


@dataclass(frozen=True, eq=False)
class StepReading:
    """What the last new token of a step computed, layer by layer, against the cache."""

    logits: torch.Tensor  # (V,) the head's score of every next token
    queries: np.ndarray  # (L, nh, d) its query row at each layer, as it met the keys (turned, for RoPE)
    weights: np.ndarray  # (L, nh, S) its attention over every cached entry


def forward_step(model: LanguageModel, cache: KeyValueCache, ids: torch.Tensor, new: int,
                 keep: Sequence[int] | None = None, reassign: bool = False,
                 rotation: Rotation | None = None, band: tuple[int, int] | None = None) -> StepReading:
    """Run the last `new` tokens of ids (1, T) through every layer, appending their keys and values to cache.
    keep: the cache entries (indices, after appending) to keep, the rest evicted before attending (None: all);
    reassign: turn keys and queries by their place in the cache rather than in the text (StreamingLLM);
    rotation: the family's turn of positions 0 … T − 1 (None for a family that adds its positions).
    band: (sinks, window), for a prefill into an empty cache of a family that adds its positions: each new token
    sees the first sinks entries and the last window up to itself, what StreamingLLM's cache gives it when the
    text is read a token at a time, and the cache then keeps what the last token saw."""
    if band is not None and (len(cache) or keep is not None or rotation is not None):
        raise ValueError("a band is a prefill's, into an empty cache, of a family that adds its positions")
    loaded, family, shape = model.model, model.family, model.shape
    torch_model = loaded.model
    tokens = ids.shape[1]
    cache.positions.extend(range(tokens - new, tokens))
    kept = list(range(len(cache.positions))) if keep is None else list(keep)
    cache.positions[:] = [cache.positions[index] for index in kept]
    places = list(range(len(kept))) if reassign else cache.positions  # (S,) the positions the turn reads
    entry, query_at = torch.arange(len(kept))[None, :], torch.arange(len(kept) - new, len(kept))[:, None]
    later = entry > query_at  # (n, S)
    seen = None  # with a band, the entries the last token sees: the cache after the step
    if band is not None:
        sinks, window = band
        later |= (entry >= sinks) & (entry <= query_at - window)  # (n, S): outside each token's band
        seen = [index for index in range(len(kept)) if index < sinks or index > len(kept) - 1 - window]
        cache.positions[:] = [cache.positions[index] for index in seen]
    divisor = scaling_divisor("sqrt", shape.head_size)
    hidden = family.embed(torch_model, ids, torch.zeros_like(ids))[:, -new:]  # (1, n, C): a lookup per token
    queries, weights = [], []
    for layer in range(shape.num_layers):
        projections = family.projections(torch_model, layer)
        read = family.attention_input(torch_model, layer, hidden)  # (1, n, C): the normed stream (pre-norm)
        query = split_heads(projections.query(read), shape.num_heads)  # (1, nh, n, d): never cached
        key = split_heads(projections.key(read), shape.kv_heads)  # (1, n_kv, n, d), before any turn
        value = split_heads(projections.value(read), shape.kv_heads)  # (1, n_kv, n, d)
        if layer == len(cache.keys):  # the prefill: the first rows of this layer's cache
            cache.keys.append(key[:, :, :0])
            cache.values.append(value[:, :, :0])
        cache.keys[layer] = torch.cat((cache.keys[layer], key), dim=2)[:, :, kept]  # (1, n_kv, S, d)
        cache.values[layer] = torch.cat((cache.values[layer], value), dim=2)[:, :, kept]  # (1, n_kv, S, d)
        keys = cache.keys[layer]
        if rotation is not None:
            query = _turned(rotation, places[-new:]).rotate(query)  # (1, nh, n, d)
            keys = _turned(rotation, places).rotate(keys)  # (1, n_kv, S, d)
        scores = query @ repeat_kv(keys, shape.num_heads).transpose(-1, -2) / divisor  # (1, nh, n, S)
        attention = scores.masked_fill(later, float("-inf")).softmax(-1)  # (1, nh, n, S): each new token looks back
        context = attention @ repeat_kv(cache.values[layer], shape.num_heads)  # (1, nh, n, d)
        attended = family.attention_output(torch_model, layer, projections.output(merge_heads(context)), hidden)
        hidden = _mlp_block(family.block_parts(torch_model, layer), attended)  # (1, n, C)
        queries.append(query[0, :, -1])  # (nh, d)
        if seen is None:
            weights.append(attention[0, :, -1])  # (nh, S)
        else:  # what no later token of a band sees leaves the cache
            weights.append(attention[0, :, -1, seen])  # (nh, S after the step)
            cache.keys[layer], cache.values[layer] = cache.keys[layer][:, :, seen], cache.values[layer][:, :, seen]
    return StepReading(logits=model.logits(hidden[0, -1]),  # (V,)
                       queries=torch.stack(queries).numpy(), weights=torch.stack(weights).numpy())


def _turned(rotation: Rotation, positions: Sequence[int]) -> Rotation:
    """The turn of the given positions only: angles (len(positions), d/2)."""
    return Rotation(angles=rotation.angles[list(positions)], scale=rotation.scale)


def _mlp_block(parts, attended: torch.Tensor) -> torch.Tensor:
    """(1, n, C) the attention block's output -> (1, n, C) the layer's, the norm where the family puts it."""
    if parts.placement == "pre":
        return attended + parts.mlp(parts.mlp_norm(attended))
    return parts.mlp_norm(attended + parts.mlp(attended))
