"""Texts packed one after the other into a row (attention.stages.masks): each looks at its own keys only, under every
kind of mask, as it would alone in a row of its own."""

from __future__ import annotations

import pytest
import torch

from attention.stages.masks import allowed_keys

# Two texts packed into one row, then padding: text 1 is tokens 0-2, text 2 tokens 3-4.
PACKED = torch.tensor([[1, 1, 1, 2, 2, 0]])


def alone(kind: str, length: int) -> torch.Tensor:
    """(length, length): the keys each query of a text may look at in a row of its own."""
    return allowed_keys(kind, torch.ones(1, length, dtype=torch.long), window=1).expand(1, length, length)[0]


@pytest.mark.parametrize("kind", ["none", "causal", "window"])
def test_each_packed_text_looks_at_its_own_keys_as_if_alone(kind):
    allowed = allowed_keys(kind, PACKED, window=1)[0]  # (T, T)
    assert allowed.shape == (6, 6)
    assert torch.equal(allowed[:3, :3], alone(kind, 3))
    assert torch.equal(allowed[3:5, 3:5], alone(kind, 2))
    assert not allowed[:3, 3:].any() and not allowed[3:5, :3].any(), "no text looks at the other"
    assert not allowed[:, 5].any(), "nobody looks at padding"


def test_one_text_a_row_keeps_the_mask_broadcast_over_queries():
    assert allowed_keys("none", torch.tensor([[1, 1, 0], [1, 1, 1]])).shape == (2, 1, 3)
