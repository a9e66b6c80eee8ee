"""Rotary position embedding (RoPE, Su et al. 2021): positions enter attention as a rotation of q and k.

BERT and GPT-2 add a position's vector to every token's embedding; a Llama adds nothing. Each head's query
and key are instead cut into d/2 pairs of numbers, and pair i of the token at position p is turned by the
angle p·θ_i, with θ_i = base^(−2i/d): the first pairs turn fast, the last slowly. A turn keeps a vector's
length, and the dot product of a query turned by p·θ and a key turned by p'·θ depends on p − p' alone, so the
scores see how far apart two tokens are, never where they stand.

transformers pairs number i with number i + d/2 ("rotate_half"), not 2i with 2i + 1 as the paper writes it;
checkpoints are stored for that order (a GGUF's q and k rows are put back in it as they are read), so it is
done the same way here, and tests/core/test_llama_core.py holds the result equal to transformers'
apply_rotary_pos_emb.

Letters used in shape comments: B batch, T tokens, nh heads, d head size (even), h some heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True, eq=False)
class Rotation:
    """The angles by which each position turns each pair of a head's numbers, the same for every head."""

    angles: torch.Tensor  # (T, d/2): position p times frequency θ_i
    scale: float = 1.0  # what cos and sin are multiplied by: 1 for plain RoPE (YaRN's attention factor else)
    frequencies: torch.Tensor | None = None  # (d/2,) θ_i, when known: what turns any other position

    @classmethod
    def of(cls, frequencies: torch.Tensor, tokens: int, scale: float = 1.0) -> Rotation:
        """frequencies (d/2,): θ_i of each pair, as the model holds them (its rotary embedding's inv_freq)."""
        # right-padded texts: position p is token p of every row
        return cls.at_positions(frequencies, torch.arange(tokens), scale)  # angles (T, d/2)

    @classmethod
    def at_positions(cls, frequencies: torch.Tensor, positions: torch.Tensor, scale: float = 1.0) -> Rotation:
        """The turn of each of these positions (P,), any integers (a text moved along by Δ, a key n tokens back)."""
        # float32 product in transformers' order (position_ids.float() * inv_freq), so the angles are bit for bit
        # the model's at the same positions
        return cls(angles=positions[:, None].float() * frequencies[None, :].float(), scale=scale,
                   frequencies=frequencies)  # angles (P, d/2)

    def cos_sin(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(T, d) each: the cosine and sine of each number's angle, the angles written twice (pair i is i, i + d/2)."""
        doubled = torch.cat((self.angles, self.angles), dim=-1)  # (T, d)
        return doubled.cos() * self.scale, doubled.sin() * self.scale  # (T, d) each

    def rotate(self, heads: torch.Tensor) -> torch.Tensor:
        """(..., T, d) a head's queries or keys (any heads in front) -> (..., T, d) the same turned by position."""
        cos, sin = self.cos_sin()  # (T, d) each
        return heads * cos + rotate_half(heads) * sin  # (..., T, d)


def rotate_half(heads: torch.Tensor) -> torch.Tensor:
    """(..., d) -> (..., d): each pair (x_i, x_{i+d/2}) as (−x_{i+d/2}, x_i), the pair turned a quarter."""
    first, second = heads.chunk(2, dim=-1)  # (..., d/2) each
    return torch.cat((-second, first), dim=-1)  # (..., d)


def repeat_kv(heads: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, n_kv, T, d) -> (B, nh, T, d): each key or value head given to the nh / n_kv query heads that share it
    (grouped-query attention; one shared pair is multi-query attention). Query head h reads head h // (nh / n_kv),
    as transformers' repeat_kv hands them out."""
    return heads.repeat_interleave(num_heads // heads.shape[1], dim=1)  # (B, nh, T, d)
