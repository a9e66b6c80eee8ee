"""Which keys each query may look at: the mask added to the scaled scores before the softmax.

Every model masks its padding. On top of that an encoder (BERT) lets every token look both ways, and a
decoder (GPT-2) lets a token look back only: the causal mask, with which it was trained to predict the next
token. A user may put any of these on any model as a what-if, and a sliding window, which lets a token look
at itself and the `window` tokens before it (as Longformer's and Mistral's local attention do).

Kinds, as the core names them: "none" (padding only), "causal", "window". "model" stands for the model's own.
Shapes: B batch, T tokens.
"""

from __future__ import annotations

import torch

from attention.stages.dot_product import MASKED_SCORE
from attention.stages.mask_kinds import KINDS, MASKS, mask_kind, masked_where

__all__ = ["KINDS", "MASKS", "additive", "allowed_keys", "mask_kind", "masked_where"]


def allowed_keys(kind: str, attention_mask: torch.Tensor, window: int = 1) -> torch.Tensor:
    """(B, 1, T) for "none" on one text a row, else (B, T, T): True where query i may look at key j.

    attention_mask (B, T): 0 for padding, else which text of its row the token belongs to: 1 where each row holds one
    text, as a tokenizer pads a batch; 1, 2, … where several texts are packed one after the other into a row (the
    padding left out), and then a query looks at the keys of its own text only.
    """
    if kind not in KINDS:
        raise ValueError(f"mask must be one of {', '.join(KINDS)}; got {kind!r}")
    real = attention_mask.to(torch.bool)[:, None, :]  # (B, 1, T): a padding key is never looked at
    if attention_mask.numel() and attention_mask.max() > 1:  # texts packed in a row: each looks at itself only
        real = real & (attention_mask[:, :, None] == attention_mask[:, None, :])  # (B, T, T)
    if kind == "none":
        return real
    tokens = attention_mask.shape[-1]
    behind = torch.arange(tokens)[:, None] - torch.arange(tokens)[None, :]  # (T, T): i − j, how far back key j is
    allowed = behind >= 0 if kind == "causal" else (behind >= 0) & (behind <= window)  # (T, T)
    return real & allowed  # (B, T, T)


def additive(kind: str, attention_mask: torch.Tensor, window: int = 1) -> torch.Tensor:
    """allowed_keys as scores to add: 0 where a key is kept, MASKED_SCORE where it is masked."""
    return torch.where(allowed_keys(kind, attention_mask, window), 0.0, MASKED_SCORE)
