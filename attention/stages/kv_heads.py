"""Key and value heads shared by query heads (grouped-query attention), and what the key/value cache weighs.

A Llama's nh query heads read only n_kv key and value heads: query head h reads key/value head h // (nh / n_kv)
(shared_head, as transformers' repeat_kv hands them out), so each group of nh / n_kv query
heads computes its scores against one set of keys and mixes one set of values. A decoder keeps every token's keys
and values of every layer for the tokens it writes next (the key/value cache), and sharing them makes that cache
nh / n_kv times smaller: SmolLM2-135M's 9 query heads share 3, a third of multi-head attention's cache.

Letters: L layers, nh query heads, n_kv key/value heads, T tokens, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention.stages.settings import ModelShape, TraceSettings

# Bytes of one number in the dtypes a cache is held in: float32 as the page computes, bfloat16 as a model is
# usually served (SmolLM2's weights on the Hub are bfloat16).
BYTES_PER_NUMBER = {"float32": 4, "bfloat16": 2}


def cache_bytes(layers: int, kv_heads: int, tokens: int, head_size: int, bytes_per_number: int = 4) -> int:
    """2 (K and V) · L · n_kv · T · d · bytes per number: a key/value cache's size, before it is filled."""
    return 2 * layers * kv_heads * tokens * head_size * bytes_per_number


def shared_head(head: int, num_heads: int, num_kv_heads: int) -> int:
    """The key/value head that query head `head` reads, of num_kv_heads shared by num_heads query heads. Here, with
    no torch, because the page's state reads it before the first paint (tests/page/test_first_paint.py)."""
    return head // (num_heads // num_kv_heads)


@dataclass(frozen=True)
class SharedHeads:
    """Which key/value head each query head reads: nh query heads sharing n_kv (n_kv = nh: each its own)."""

    num_heads: int  # nh
    num_kv_heads: int  # n_kv, a divisor of nh

    def __post_init__(self) -> None:
        if self.num_kv_heads < 1 or self.num_heads % self.num_kv_heads:
            raise ValueError(f"{self.num_heads} query heads cannot share {self.num_kv_heads} key/value heads: "
                             f"n_kv must divide nh ({self.num_heads})")

    @classmethod
    def of(cls, shape: ModelShape, settings: TraceSettings) -> SharedHeads:
        """The heads these settings compute: the model's own sharing for its trained weights, none for the toys."""
        return cls(settings.num_heads(shape), settings.num_kv_heads(shape))

    @property
    def shared(self) -> bool:
        """Whether some query heads read the same key/value head (grouped- or multi-query attention)."""
        return self.num_kv_heads < self.num_heads

    @property
    def group_size(self) -> int:
        """How many query heads read each key/value head: nh / n_kv."""
        return self.num_heads // self.num_kv_heads

    def kv_head(self, head: int) -> int:
        """The key/value head query head `head` reads."""
        return shared_head(head, self.num_heads, self.num_kv_heads)

    def sharing(self, head: int) -> range:
        """The query heads that read the same key/value head as `head`, itself among them."""
        first = self.kv_head(head) * self.group_size
        return range(first, first + self.group_size)


@dataclass(frozen=True)
class CacheSize:
    """A decoder's key/value cache per token: its own, and that of the same model with a key/value head for every
    query head (multi-head attention)."""

    num_layers: int  # L
    num_heads: int  # nh
    num_kv_heads: int  # n_kv
    head_size: int  # d

    @classmethod
    def of(cls, shape: ModelShape) -> CacheSize:
        return cls(shape.num_layers, shape.num_heads, shape.kv_heads, shape.head_size)

    def per_token(self, dtype: str = "float32") -> int:
        """2 · L · n_kv · d · bytes: what each token adds to the cache, held in dtype (BYTES_PER_NUMBER)."""
        return cache_bytes(self.num_layers, self.num_kv_heads, 1, self.head_size, BYTES_PER_NUMBER[dtype])

    def multi_head_per_token(self, dtype: str = "float32") -> int:
        """2 · L · nh · d · bytes: the same with a key/value head for each query head."""
        return cache_bytes(self.num_layers, self.num_heads, 1, self.head_size, BYTES_PER_NUMBER[dtype])

    @property
    def smaller_by(self) -> int:
        """How many times smaller the shared cache is than multi-head attention's: nh / n_kv."""
        return self.num_heads // self.num_kv_heads
