"""The from-scratch trace measured against code nobody here wrote.

Two references for the same layer: transformers' own BertSelfAttention module, and
the layer's weights loaded into torch.nn.MultiheadAttention and run through
torch.nn.functional.scaled_dot_product_attention. Differences are returned as
numbers (largest absolute difference), so that a page can show them.
Shapes: B batch, T tokens, C hidden size, nh heads, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from attention.dot_product import additive_mask, merge_heads, split_heads
from attention.encoding import Encoding
from attention.models import LoadedModel
from attention.trace import Trace


@dataclass(frozen=True)
class LayerReference:
    """What the references compute for one layer, all heads."""

    transformers_weights: np.ndarray  # (B, nh, T, T) BertSelfAttention's attention probabilities
    transformers_context: np.ndarray  # (B, T, nh·d) its attention output before the dense
    transformers_attention_output: np.ndarray  # (B, T, C) BertAttention: LayerNorm(dense(context) + X)
    torch_weights: np.ndarray  # (B, nh, T, T) nn.MultiheadAttention, per head
    torch_output: np.ndarray  # (B, T, C) nn.MultiheadAttention: out_proj(concat)
    sdpa_context: np.ndarray  # (B, T, nh·d) F.scaled_dot_product_attention, heads concatenated


def transformers_weights(loaded: LoadedModel, encoding: Encoding, layer: int) -> np.ndarray:
    """(B, nh, T, T): the attention probabilities transformers itself computes for this layer."""
    attention = loaded.model.encoder.layer[layer].attention
    with torch.inference_mode():
        hidden = torch.from_numpy(encoding.layer_input(layer))  # (B, T, C)
        mask = additive_mask(torch.from_numpy(encoding.attention_mask))[:, None]  # (B, 1, 1, T)
        _, weights = attention.self(hidden, attention_mask=mask)  # (B, nh, T, T)
    return weights.numpy()


def layer_reference(loaded: LoadedModel, encoding: Encoding, layer: int) -> LayerReference:
    """Run one layer's trained attention through transformers and through plain PyTorch."""
    attention = loaded.model.encoder.layer[layer].attention
    shape = loaded.shape
    with torch.inference_mode():
        hidden = torch.from_numpy(encoding.layer_input(layer))  # (B, T, C)
        keep = torch.from_numpy(encoding.attention_mask).to(torch.bool)  # (B, T)
        mask = additive_mask(keep)[:, None]  # (B, 1, 1, T)

        context, weights = attention.self(hidden, attention_mask=mask)  # (B, T, nh·d), (B, nh, T, T)
        attention_output = attention(hidden, attention_mask=mask)[0]  # (B, T, C)

        mha = _as_multihead_attention(attention, shape.hidden_size, shape.num_heads)
        torch_output, torch_weights = mha(hidden, hidden, hidden, key_padding_mask=~keep,
                                          need_weights=True, average_attn_weights=False)  # (B, T, C), (B, nh, T, T)

        query, key, value = (split_heads(linear(hidden), shape.num_heads)  # (B, nh, T, d)
                             for linear in (attention.self.query, attention.self.key, attention.self.value))
        sdpa = F.scaled_dot_product_attention(query, key, value, attn_mask=keep[:, None, None, :])  # (B, nh, T, d)

    return LayerReference(
        transformers_weights=weights.numpy(),
        transformers_context=context.numpy(),
        transformers_attention_output=attention_output.numpy(),
        torch_weights=torch_weights.numpy(),
        torch_output=torch_output.numpy(),
        sdpa_context=merge_heads(sdpa).numpy(),  # (B, T, nh·d)
    )


def parity_report(trace: Trace, reference: LayerReference) -> dict[str, float]:
    """Largest absolute differences between a bert-source, √d_k trace and both references.

    Padding rows are left out: the references disagree with each other about
    queries that are themselves padding, and nothing reads them.
    """
    settings = trace.settings
    if settings.source != "bert" or settings.scaling != "sqrt" or settings.similarity != "dot" or settings.heads_off:
        raise ValueError("parity is defined for the trained weights with √d_k scaling, dot product, all heads on")
    real = trace["attention_mask"].astype(bool)  # (B, T)
    head = settings.head

    def largest(ours: np.ndarray, theirs: np.ndarray) -> float:
        return float(np.abs(ours - theirs)[real].max())

    return {
        "weights vs transformers": largest(trace["weights"], reference.transformers_weights[:, head]),
        "weights vs nn.MultiheadAttention": largest(trace["weights"], reference.torch_weights[:, head]),
        "context vs transformers": largest(trace["concat"], reference.transformers_context),
        "context vs scaled_dot_product_attention": largest(trace["concat"], reference.sdpa_context),
        "output vs nn.MultiheadAttention": largest(trace["output"], reference.torch_output),
        "attention output vs transformers": largest(trace["attention output"],
                                                    reference.transformers_attention_output),
    }


def _as_multihead_attention(attention, hidden_size: int, num_heads: int) -> torch.nn.MultiheadAttention:
    """The same trained weights inside torch.nn.MultiheadAttention (packed in_proj, out_proj)."""
    mha = torch.nn.MultiheadAttention(hidden_size, num_heads, bias=True, batch_first=True)
    mha.eval()
    with torch.no_grad():
        projections = (attention.self.query, attention.self.key, attention.self.value)
        mha.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))  # (3·C, C)
        mha.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))  # (3·C,)
        mha.out_proj.weight.copy_(attention.output.dense.weight)  # (C, C)
        mha.out_proj.bias.copy_(attention.output.dense.bias)  # (C,)
    return mha
