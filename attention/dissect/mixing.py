"""How much of a token's update came from other tokens once the residual and the norm are counted (Kobayashi et al.
2021, "Incorporating Residual and Normalization Layers into Analysis of Masked Language Models").

A head's weight α_ij says how much of v_j token i reads, not how much of token i's new vector came from token j.
The attention block's output (before the norm of a post-norm family) is a sum over the tokens j:

    y_i = Σ_j z_ij + b_i,   z_ij = Σ_h α^h_ij · (x̂_j W_V^h) W_O^h  + [j = i] · x_i,
    b_i = Σ_h (Σ_j α^h_ij) · b_V^h W_O^h + b_O   (the biases: from no token)

where x̂ is what the heads read (x itself in BERT, its norm in GPT-2 and Llama: a per-token norm, so each x̂_j is
token j's alone) and x_i the residual, which only token i carries. A post-norm family (BERT) then applies
LayerNorm to y_i; as the paper does, it is linearised around y_i: with s_i = √(var(y_i) + ε) held fixed,
LN(y_i) = Σ_j γ ⊙ (z_ij − mean(z_ij)) / s_i + [γ ⊙ (b_i − mean(b_i)) / s_i + β], exact for that token.
Pre-norm families (GPT-2, Llama) have no norm after the add: their parts sum to x_i + attention_i.

The mixing ratio of token i is the paper's: ‖Σ_{j≠i} z̃_ij‖ / (‖Σ_{j≠i} z̃_ij‖ + ‖z̃_ii‖), z̃ the parts after the
linearised norm (the parts themselves for pre-norm), so 0 when the token kept to itself and its residual, 1 when
its update came from the others alone.

Letters used in shape comments: B batch, T tokens, t query rows of a chunk, C hidden size, nh heads, n_kv key/value
heads, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attention.dissect.trace import layer_attention
from attention.models.loading import LoadedModel
from attention.stages.dot_product import split_heads
from attention.stages.rotary import repeat_kv
from attention.stages.settings import TraceSettings
from attention.text.encoding import Encoding

# Query rows decomposed at once: the parts of a chunk are t·T·C floats (64 rows of 512 tokens of C = 384: 50 MB)
CHUNK_FLOATS = 16_000_000


@dataclass(frozen=True, eq=False)
class TokenParts:
    """The attention block's output of some query rows, token by token: parts.sum(2) + bias is the output."""

    parts: torch.Tensor  # (B, t, T, C) z̃_ij: what token j put into token i's output (its residual on j = i)
    bias: torch.Tensor  # (B, t, C) what no token put there: the biases (and, post-norm, LayerNorm's β)
    rows: range  # the query rows i


@dataclass(frozen=True, eq=False)
class Mixing:
    """One layer's attention block, per query token i and source token j."""

    layer: int
    placement: str  # "post": the parts are read after the linearised LayerNorm; "pre": there is none after the add
    contributions: np.ndarray  # (B, T, T) ‖z̃_ij‖: how much token j wrote into token i (its residual on the diagonal)
    bias: np.ndarray  # (B, T) ‖b̃_i‖: how much the biases wrote
    mixing_ratio: np.ndarray  # (B, T) ‖Σ_{j≠i} z̃_ij‖ / (‖Σ_{j≠i} z̃_ij‖ + ‖z̃_ii‖)


def token_parts(loaded: LoadedModel, encoding: Encoding, layer: int, rows: range | None = None,
                weights: np.ndarray | None = None) -> TokenParts:
    """The decomposition of query rows (default all) of layer `layer`'s attention block; weights: its every head's
    (B, nh, T, T), if at hand."""
    shape = loaded.shape
    settings = TraceSettings(layer=layer).validate(shape)  # ValueError naming the valid layers
    family, model = loaded.family, loaded.model
    if weights is None:
        weights = layer_attention(loaded, encoding, settings).weights  # (B, nh, T, T)
    rows = range(encoding.num_tokens) if rows is None else rows
    parts = family.block_parts(model, layer)
    projections = family.projections(model, layer)
    with torch.inference_mode():
        residual = torch.from_numpy(encoding.layer_input(layer))  # (B, T, C)
        read = family.attention_input(model, layer, residual)  # (B, T, C): x̂, each token's own
        values = split_heads(read @ projections.value.weight.T, shape.kv_heads)  # (B, n_kv, T, d): no bias
        values = repeat_kv(values, shape.num_heads)  # (B, nh, T, d)
        w_o = projections.output.weight.view(shape.hidden_size, shape.num_heads, shape.head_size)  # (C, nh, d)
        moved = torch.einsum("bhjd,chd->bhjc", values, w_o)  # (B, nh, T, C): (x̂_j W_V^h) W_O^h
        alpha = torch.from_numpy(np.array(weights[:, :, rows.start:rows.stop]))  # (B, nh, t, T)
        token_parts_ = torch.einsum("bhij,bhjc->bijc", alpha, moved)  # (B, t, T, C)
        own = torch.arange(len(rows))  # the diagonal: token i's own part carries its residual
        token_parts_[:, own, torch.arange(rows.start, rows.stop)] += residual[:, rows.start:rows.stop]
        value_bias = torch.einsum("hd,chd->hc", projections.value.bias.view(shape.kv_heads, shape.head_size)
                                  .repeat_interleave(shape.num_heads // shape.kv_heads, dim=0), w_o)  # (nh, C)
        bias = alpha.sum(-1).transpose(1, 2) @ value_bias + projections.output.bias  # (B, t, C)
        if parts.placement == "post":
            token_parts_, bias = _linearised_norm(parts.attention_norm, token_parts_, bias)
    return TokenParts(parts=token_parts_, bias=bias, rows=rows)


def mixing(loaded: LoadedModel, encoding: Encoding, layer: int) -> Mixing:
    """Every query token's decomposition of layer `layer`'s attention block, reduced to norms, a chunk of rows at
    a time."""
    weights = layer_attention(loaded, encoding, TraceSettings(layer=layer)).weights  # (B, nh, T, T)
    batch, _, tokens, _ = weights.shape
    step = max(1, CHUNK_FLOATS // (batch * tokens * loaded.shape.hidden_size))
    contributions, bias, ratio = [], [], []
    for start in range(0, tokens, step):
        chunk = token_parts(loaded, encoding, layer, range(start, min(tokens, start + step)), weights)
        parts = chunk.parts  # (B, t, T, C)
        own_index = torch.arange(start, start + parts.shape[1])
        own = parts[:, torch.arange(parts.shape[1]), own_index]  # (B, t, C)
        others = (parts.sum(2) - own).norm(dim=-1)  # (B, t): ‖Σ_{j≠i} z̃_ij‖
        contributions.append(parts.norm(dim=-1).numpy())  # (B, t, T)
        bias.append(chunk.bias.norm(dim=-1).numpy())  # (B, t)
        ratio.append((others / (others + own.norm(dim=-1))).numpy())  # (B, t)
    return Mixing(layer=layer, placement=loaded.family.block_parts(loaded.model, layer).placement,
                  contributions=np.concatenate(contributions, axis=1), bias=np.concatenate(bias, axis=1),
                  mixing_ratio=np.concatenate(ratio, axis=1))


def _linearised_norm(norm: torch.nn.LayerNorm, parts: torch.Tensor, bias: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """LayerNorm of Σ_j parts + bias, split over its terms: each centred and divided by the whole sum's s_i, and β
    added to the bias's term. (B, t, T, C), (B, t, C) -> the same."""
    total = parts.sum(2) + bias  # (B, t, C): y_i
    scale = (total.var(-1, unbiased=False, keepdim=True) + norm.eps).sqrt()  # (B, t, 1): s_i
    gain = norm.weight  # (C,) γ
    normed_parts = gain * (parts - parts.mean(-1, keepdim=True)) / scale[:, :, None]  # (B, t, T, C)
    normed_bias = gain * (bias - bias.mean(-1, keepdim=True)) / scale + norm.bias  # (B, t, C)
    return normed_parts, normed_bias
