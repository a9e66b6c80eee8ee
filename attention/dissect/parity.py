"""The from-scratch trace measured against code nobody here wrote.

Two references for the same layer: transformers' own attention code (BertSelfAttention and BertAttention for
BERT; GPT-2's eager_attention_forward and GPT2Attention, with the causal mask GPT2Model makes), and the
layer's trained weights loaded into torch.nn.MultiheadAttention and run through
torch.nn.functional.scaled_dot_product_attention, with the model's own mask. Neither of torch's turns q and k by
position (RoPE) or shares key heads (GQA): for a Llama they are handed Q, K and V as its heads read them (turned
and repeated, attention.dissect.trace.projections_as_read), with W_Q, W_K and W_V left out of
MultiheadAttention (its input projections the identity), so they check the attention and W_O, and transformers
checks the rest. Differences are returned as
numbers (largest absolute difference), so that a page can show them.
Shapes: B batch, T tokens, C hidden size, nh heads, d head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from attention.dissect.outline import shares_heads, turns_by_position
from attention.dissect.trace import Trace, projections_as_read
from attention.models.loading import LoadedModel
from attention.stages import masks
from attention.stages.dot_product import merge_heads, split_heads
from attention.stages.settings import TraceSettings
from attention.text.encoding import Encoding


@dataclass(frozen=True)
class LayerReference:
    """What the references compute for one layer, all heads."""

    transformers_weights: np.ndarray  # (B, nh, T, T) transformers' attention probabilities
    transformers_context: np.ndarray  # (B, T, nh·d) its heads' context side by side, before W_O
    transformers_attention_output: np.ndarray  # (B, T, C) its attention block's output (BERT: LayerNorm(W_O·c + X))
    torch_weights: np.ndarray  # (B, nh, T, T) nn.MultiheadAttention, per head
    torch_output: np.ndarray  # (B, T, C) nn.MultiheadAttention: out_proj(concat)
    sdpa_context: np.ndarray  # (B, T, nh·d) F.scaled_dot_product_attention, heads concatenated


def transformers_weights(loaded: LoadedModel, encoding: Encoding, layer: int) -> np.ndarray:
    """(B, nh, T, T): the attention probabilities transformers itself computes for this layer."""
    with torch.inference_mode():
        reference = loaded.family.reference(loaded.model, layer, torch.from_numpy(encoding.layer_input(layer)),
                                            torch.from_numpy(encoding.attention_mask))
    return reference.weights.numpy()


def layer_reference(loaded: LoadedModel, encoding: Encoding, layer: int) -> LayerReference:
    """Run one layer's trained attention through transformers and through plain PyTorch."""
    family, shape = loaded.family, loaded.shape
    projections = family.projections(loaded.model, layer)
    with torch.inference_mode():
        residual = torch.from_numpy(encoding.layer_input(layer))  # (B, T, C)
        attention_mask = torch.from_numpy(encoding.attention_mask)  # (B, T)
        theirs = family.reference(loaded.model, layer, residual, attention_mask)
        hidden = family.attention_input(loaded.model, layer, residual)  # (B, T, C): X
        batch, tokens, _ = hidden.shape
        allowed = masks.allowed_keys(shape.own_mask, attention_mask).expand(batch, tokens, tokens)  # (B, T, T)

        blocked = ~allowed.repeat_interleave(shape.num_heads, dim=0)  # (B·nh, T, T): True where not looked at
        settings = TraceSettings(layer=layer)
        if turns_by_position(shape, settings) or shares_heads(shape, settings):
            read = projections_as_read(loaded, encoding, settings)  # (B, T, nh·d) each: turned, shared
            mha = _as_multihead_attention(projections, shape.hidden_size, shape.num_heads, project_inputs=False)
            torch_output, torch_weights = mha(read["Q"], read["K"], read["V"], attn_mask=blocked, need_weights=True,
                                              average_attn_weights=False)  # (B, T, C), (B, nh, T, T)
            query, key, value = (split_heads(read[letter], shape.num_heads) for letter in "QKV")  # (B, nh, T, d)
        else:
            mha = _as_multihead_attention(projections, shape.hidden_size, shape.num_heads)
            torch_output, torch_weights = mha(hidden, hidden, hidden, attn_mask=blocked, need_weights=True,
                                              average_attn_weights=False)  # (B, T, C), (B, nh, T, T)
            query, key, value = (split_heads(linear(hidden), shape.num_heads)  # (B, nh, T, d)
                                 for linear in (projections.query, projections.key, projections.value))
        sdpa = F.scaled_dot_product_attention(query, key, value, attn_mask=allowed[:, None])  # (B, nh, T, d)

    return LayerReference(
        transformers_weights=theirs.weights.numpy(),
        transformers_context=theirs.context.numpy(),
        transformers_attention_output=theirs.attention_output.numpy(),
        torch_weights=torch_weights.numpy(),
        torch_output=torch_output.numpy(),
        sdpa_context=merge_heads(sdpa).numpy(),  # (B, T, nh·d)
    )


def parity_report(trace: Trace, reference: LayerReference) -> dict[str, float]:
    """Largest absolute differences between a trace of the trained weights as the model runs them and both references.

    Padding rows are left out: the references disagree with each other about
    queries that are themselves padding, and nothing reads them.
    """
    settings = trace.settings
    if (settings.source != "bert" or settings.scaling != "sqrt" or settings.similarity != "dot" or settings.heads_off
            or settings.mask != "model"):
        raise ValueError("parity is defined for the trained weights with √d_k scaling, dot product, the model's own "
                         "mask, all heads on")
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


def _as_multihead_attention(projections, hidden_size: int, num_heads: int,
                            project_inputs: bool = True) -> torch.nn.MultiheadAttention:
    """The same trained weights inside torch.nn.MultiheadAttention (packed in_proj, out_proj); without
    project_inputs, in_proj is the identity and MultiheadAttention reads Q, K and V projected already."""
    mha = torch.nn.MultiheadAttention(hidden_size, num_heads, bias=True, batch_first=True)
    mha.eval()
    with torch.no_grad():
        if project_inputs:
            linears = (projections.query, projections.key, projections.value)
            mha.in_proj_weight.copy_(torch.cat([linear.weight for linear in linears]))  # (3·C, C)
            mha.in_proj_bias.copy_(torch.cat([linear.bias for linear in linears]))  # (3·C,)
        else:
            mha.in_proj_weight.copy_(torch.eye(hidden_size).repeat(3, 1))  # (3·C, C): Q, K, V as they come
            mha.in_proj_bias.zero_()
        mha.out_proj.weight.copy_(projections.output.weight)  # (C, C)
        mha.out_proj.bias.copy_(projections.output.bias)  # (C,)
    return mha
