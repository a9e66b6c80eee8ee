"""The masks a user may choose, by name, without torch: the page's controls and its link parser read them
before torch is imported (attention/stages/masks.py builds them as tensors)."""

from __future__ import annotations

MASKS = ("model", "causal", "none", "window")  # what a user may choose; "model": the model's own
KINDS = ("none", "causal", "window")


def mask_kind(mask: str, own_mask: str) -> str:
    """The mask a choice stands for: the model's own for "model", else the choice itself."""
    return own_mask if mask == "model" else mask


def masked_where(kind: str, window: int = 1) -> str:
    """Which keys a mask sets to −∞, in the words of a formula: "padding keys", "keys after the query"…"""
    return {
        "none": "padding keys",
        "causal": "padding and keys after the query",
        "window": f"padding, keys after the query and keys more than {window} back",
    }[kind]
