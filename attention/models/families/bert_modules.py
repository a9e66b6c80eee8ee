"""BERT's encoder built from torch.nn alone, for inference: the modules, names and order of operations of
transformers' BertModel (eager attention), so that a checkpoint's weights load as they are and every number
is bit for bit the one transformers computes (tests/core/test_bert_modules.py runs both on the same weights).

Why not transformers' own class: importing its modelling stack (torch._dynamo, torch.distributed, sympy,
scipy) takes longer than loading and running the model, and a new server's first heatmap waited on it.
transformers' code stays the proof's reference (BertFamily.reference), imported when a proof is asked for.

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, d head size, L layers, I the
feed-forward's inner size.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from attention.stages.dot_product import MASKED_SCORE

# The activations of BERT checkpoints computed here, by the config's hidden_act, as transformers computes them.
ACTIVATIONS = {
    "gelu": F.gelu,
    "relu": F.relu,
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
}
# Every parameter is made empty (on the meta device) and replaced by the checkpoint's own tensor in build(): nothing
# is initialised at random. An embedding is given its empty weight, since its initialisation on the meta device
# imports torch._dynamo (1.6 s), as torch.device("meta") around the whole model does.
EMPTY = {"device": "meta"}
# A checkpoint's keys that are not the encoder: its pooler, its heads (read apart, attention.models.lm_heads).
NOT_THE_ENCODER = ("pooler.", "cls.")


def unsupported(config) -> str | None:
    """What in a BERT config this encoder does not compute, as the page says it; None when it computes it all."""
    if config.hidden_act not in ACTIVATIONS:
        return f"its activation {config.hidden_act!r} is none of {', '.join(ACTIVATIONS)}"
    if getattr(config, "is_decoder", False) or getattr(config, "add_cross_attention", False):
        return "it is configured as a decoder with cross-attention, not an encoder"
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return f"its positions are {config.position_embedding_type!r}, not absolute embeddings"
    if config.hidden_size % config.num_attention_heads:
        return (f"its hidden size {config.hidden_size} is not a multiple of its "
                f"{config.num_attention_heads} heads")
    return None


def padding_mask(attention_mask: torch.Tensor) -> torch.Tensor | None:
    """(B, T) of 1 = token, 0 = padding -> (B, 1, 1, T) added to every head's scores: 0 where kept,
    MASKED_SCORE where padding; None when nothing is padding (as transformers hands its layers)."""
    if bool(attention_mask.all()):
        return None
    keep = attention_mask.to(torch.bool)[:, None, None, :]  # (B, 1, 1, T)
    return torch.where(keep, 0.0, MASKED_SCORE)


def _embedding(count: int, size: int) -> nn.Embedding:
    return nn.Embedding(count, size, _weight=torch.empty(count, size, **EMPTY))  # (count, size), empty


class BertEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = _embedding(config.vocab_size, config.hidden_size)  # (V, C)
        self.position_embeddings = _embedding(config.max_position_embeddings, config.hidden_size)  # (P, C)
        self.token_type_embeddings = _embedding(config.type_vocab_size, config.hidden_size)  # (2, C)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps, **EMPTY)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1])[None, :]  # (1, T)
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)  # (B, T, C)
        return self.LayerNorm(embeddings + self.position_embeddings(positions))  # (B, T, C), transformers' order


class BertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.head_size = config.hidden_size // config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size, **EMPTY)  # (nh·d, C)
        self.key = nn.Linear(config.hidden_size, config.hidden_size, **EMPTY)  # (nh·d, C)
        self.value = nn.Linear(config.hidden_size, config.hidden_size, **EMPTY)  # (nh·d, C)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        batch, tokens, _ = hidden.shape
        query, key, value = (projection(hidden).view(batch, tokens, self.num_heads, self.head_size).transpose(1, 2)
                             for projection in (self.query, self.key, self.value))  # (B, nh, T, d) each
        scores = torch.matmul(query, key.transpose(2, 3)) * self.head_size**-0.5  # (B, nh, T, T)
        if mask is not None:
            scores = scores + mask  # (B, nh, T, T)
        weights = torch.softmax(scores, dim=-1)  # (B, nh, T, T)
        context = torch.matmul(weights, value).transpose(1, 2).contiguous()  # (B, T, nh, d)
        return context.reshape(batch, tokens, -1)  # (B, T, nh·d)


class ResidualOutput(nn.Module):
    """LayerNorm(dense(h) + residual): the attention block's output, LayerNorm(W_O · concat + X) (transformers'
    BertSelfOutput), and the feed-forward's, from its inner size I (BertOutput)."""

    def __init__(self, config, inner_size: int):
        super().__init__()
        self.dense = nn.Linear(inner_size, config.hidden_size, **EMPTY)  # (C, nh·d) or (C, I)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps, **EMPTY)

    def forward(self, inner: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(inner) + residual)  # (B, T, C)


class BertAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = ResidualOutput(config, config.hidden_size)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        return self.output(self.self(hidden, mask), hidden)  # (B, T, C)


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size, **EMPTY)  # (I, C)
        self.activation = ACTIVATIONS[config.hidden_act]

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.activation(self.dense(hidden))  # (B, T, I)


class BertLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = ResidualOutput(config, config.intermediate_size)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        attention_output = self.attention(hidden, mask)  # (B, T, C)
        return self.output(self.intermediate(attention_output), attention_output)  # (B, T, C)


class BertEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
        states = [hidden]
        for layer in self.layer:
            states.append(layer(states[-1], mask))  # (B, T, C)
        return tuple(states)  # L + 1 x (B, T, C)


class BertModel(nn.Module):
    """BERT without a pooler or heads: token ids -> the embeddings and every layer's output."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                attention_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        embeddings = self.embeddings(input_ids, token_type_ids)  # (B, T, C)
        return self.encoder(embeddings, padding_mask(attention_mask))  # L + 1 x (B, T, C)


class PredictionTransform(nn.Module):
    """The masked-language-model head's transform (cls.predictions.transform): LayerNorm(act(dense(h)))."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size, **EMPTY)  # (C, C)
        self.activation = ACTIVATIONS[config.hidden_act]
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps, **EMPTY)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.activation(self.dense(hidden)))  # (..., C)


def encoder_weights(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A checkpoint's tensors as BertModel's keys, in float32: the "bert." prefix of a checkpoint saved with a head
    dropped, the pooler, the heads and the position ids some checkpoints store left out."""
    renamed = {}
    for key, tensor in weights.items():
        key = key.removeprefix("bert.")
        if not key.startswith(NOT_THE_ENCODER) and not key.endswith("position_ids"):
            renamed[key] = tensor.float()  # a no-op for float32: the core computes in float32
    return renamed


def build(config, weights: dict[str, torch.Tensor]) -> BertModel:
    """BertModel of config holding the checkpoint's weights (shared, not copied), in eval mode; ValueError naming
    what is missing, left over or of another size."""
    model = BertModel(config)  # empty: the checkpoint's tensors are put in its place
    try:
        model.load_state_dict(encoder_weights(weights), strict=True, assign=True)
    except RuntimeError as error:
        raise ValueError(f"its weights are not those of a BERT encoder of its config: {error}") from error
    model.eval()
    model.requires_grad_(False)
    return model
