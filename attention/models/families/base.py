"""What a model family must answer for the core to dissect its attention: the seam between the core and a model.

A family is a set of answers about one kind of checkpoint, read off the transformers model it loaded: how
text becomes the stream of vectors the layers read, what one layer's attention reads from that stream, its
trained W_Q, W_K, W_V and W_O, the mask it was trained with, what transformers itself computes for the
layer (the proof's reference), how its tokens read, one layer run with some heads switched off, and the
language-model head its checkpoint was trained with. Nothing here holds a model: every method takes it.

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, n_kv key/value heads (nh but under
grouped-query attention), d head size, L layers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from pathlib import Path

    from attention.stages.projections import Projections
    from attention.stages.rotary import Rotation
    from attention.stages.settings import ModelShape

Record = Callable[[str, str, str, "torch.Tensor | np.ndarray"], torch.Tensor]  # (name, stage, formula, value)


def unrecorded(name: str, stage: str, formula: str, value: torch.Tensor) -> torch.Tensor:
    """A Record that keeps nothing: the embeddings alone, for whoever needs no step of them (a layer's input)."""
    return value


@dataclass(frozen=True)
class ReferenceAttention:
    """What transformers' own modules compute for one layer's attention, all heads."""

    weights: torch.Tensor  # (B, nh, T, T) the attention probabilities
    context: torch.Tensor  # (B, T, nh·d) every head's context side by side, before W_O
    attention_output: torch.Tensor  # (B, T, C) what the layer's attention block hands on (residual included)


@dataclass(frozen=True, eq=False)
class BlockParts:
    """One layer's modules around its attention, as the block runs them (attention.dissect.block): where its two
    norms sit, what they are, and its MLP. The model's own modules, shared, never copied."""

    placement: str  # "post": add, then norm (BERT); "pre": norm, then the sublayer, then add (GPT-2, Llama)
    norm_name: str  # "LayerNorm" or "RMSNorm", as the formulas name it
    attention_norm: torch.nn.Module  # (B, T, C) -> (B, T, C): before the attention (pre) or after its add (post)
    mlp_norm: torch.nn.Module  # (B, T, C) -> (B, T, C): before the MLP (pre) or after its add (post)
    mlp: Callable[[torch.Tensor], torch.Tensor]  # (B, T, C) -> (B, T, C): the feed-forward, without its residual
    mlp_formula: str  # what mlp computes, as the block's step writes it


class MissingHead(ValueError):
    """A checkpoint holds no language-model head: the message says what it lacks and what to load instead."""


class LanguageModelHead:
    """A checkpoint's language-model head, apart from the model it sits on: the last layer's output (..., C) ->
    a score for every token of the vocabulary (..., V), read at one position of the text.

    It keeps nothing of the model: what it shares with it (tied word embeddings, GPT-2's final LayerNorm) is
    looked up on the model at each use, so whoever keeps the head keeps no second copy of the model.
    """

    objective: str  # what it guesses: "masked", the token behind the text's one mask; "next", the token after the text
    prompt: str  # what a text must be for it to guess anything, as a notice asks for one

    def logits(self, model, hidden: torch.Tensor) -> torch.Tensor:
        """(..., C) the last layer's output -> (..., V) the head's score of every token."""
        raise NotImplementedError

    def position(self, input_ids: list[int]) -> int:
        """Where in the text's tokens the guess is read; ValueError, saying what the text lacks, when nowhere."""
        raise NotImplementedError


class Family:
    """One kind of transformer: the answers the core asks of a checkpoint of it. Subclasses answer them."""

    name: str  # the config's model_type: "bert", "gpt2"
    label: str  # as a reader calls it: "BERT", "GPT-2"
    reads: str  # how its tokens look at each other, in a few words for the page: "a decoder: …"
    sink_words: str  # its sink tokens (sinks()), as a sentence names them: "[CLS] and [SEP]", "the first token"
    first_token: str  # its first token, as a sentence names it: "[CLS]", "the first token"
    separator: str | None  # the token that ends a sentence, if it has one: "[SEP]"; GPT-2 none
    own_mask: str  # the mask it was trained with, as attention.stages.masks names it: "none" (padding only) or "causal"
    reads_pairs: bool  # whether it reads a sentence pair (segment ids): BERT does, GPT-2 reads one text
    byte_level: bool  # whether its tokens are byte-level BPE (shown with a mark for a leading space)
    model_class_name: str  # the transformers class without a head that load() loads by default: "GPT2Model"
    load_kwargs: dict  # what that class's from_pretrained takes besides the checkpoint
    input_steps: tuple[tuple[str, str], ...]  # (name, formula) of the inputs a trace records, in order
    embedding_steps: tuple[tuple[str, str], ...]  # (name, formula) of the embeddings, the last "embeddings"
    attention_output_formula: str  # how the attention block's output is made of W_O's and the residual
    lm_head_prefix: str  # what the keys of its language-model head start with in a checkpoint's weights
    # its tokenizer's special tokens where a checkpoint's files name none, as transformers' tokenizer class has them:
    # {"mask_token": "[MASK]", …}
    special_tokens: dict[str, str]
    # Whether positions enter by turning q and k (RoPE, rotation()) rather than as vectors added to the embeddings:
    # a trace of its trained weights then records q and k before and after the turn. BERT and GPT-2 add them.
    rotates: bool = False

    def check_config(self, config) -> None:
        """ValueError, saying why, for a checkpoint of this family whose attention the core does not compute."""

    def read_config(self, source, folder: Path, cache_only: bool):
        """The checkpoint's config (its config.json is in folder), by default transformers' own (AutoConfig)."""
        from transformers import AutoConfig

        return AutoConfig.from_pretrained(source, local_files_only=cache_only)

    def load(self, source, config, cache_only: bool):
        """The family's model without a head from a checkpoint (a folder's Path or a Hub id, read from the cache
        alone when cache_only), for inference: eval mode, no gradients, attention weights available. By default
        transformers' own class with eager attention (transformers 5's default, sdpa, returns no weights)."""
        import transformers

        model = getattr(transformers, self.model_class_name).from_pretrained(
            source, attn_implementation="eager", local_files_only=cache_only, **self.load_kwargs)
        model.eval()
        model.requires_grad_(False)
        return model

    def shape(self, config) -> ModelShape:
        from attention.stages.settings import ModelShape

        return ModelShape(num_layers=config.num_hidden_layers, num_heads=config.num_attention_heads,
                          hidden_size=config.hidden_size, family=self.name, own_mask=self.own_mask,
                          num_kv_heads=self.num_kv_heads(config))

    def num_kv_heads(self, config) -> int | None:
        """n_kv, the key and value heads its query heads share (grouped-query attention); None: each query head
        has its own key and value head, as BERT's and GPT-2's do."""
        return None

    def rotation(self, model, tokens: int) -> Rotation | None:
        """How each of `tokens` positions turns q and k (attention.stages.rotary), the same in every layer; None
        for a family whose positions are added to the embeddings (rotates False)."""
        return None

    def readable(self, tokens: list[str]) -> tuple[str, ...]:
        """The tokens as the page shows them."""
        from attention.models.readable import readable_tokens

        return readable_tokens(tokens, self.byte_level)

    def sinks(self, special_tokens_mask: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """(B, T) bool: the tokens where the family's heads park attention they spend nowhere else."""
        raise NotImplementedError

    def forward(self, model, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                attention_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The model run once: L + 1 x (B, T, C), where element ℓ < L is the input of layer ℓ."""
        raise NotImplementedError

    def embed(self, model, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
              record: Record = unrecorded) -> torch.Tensor:
        """(B, T, C) the embeddings, each of embedding_steps recorded as it is made (by default, kept by no one)."""
        raise NotImplementedError

    def layer_input_formula(self, layer: int) -> str:
        """How the layer's attention input X is made, as the shapes panel writes it."""
        raise NotImplementedError

    def attention_input(self, model, layer: int, residual: torch.Tensor) -> torch.Tensor:
        """(B, T, C) what layer `layer`'s Q, K and V are projected from, given the layer's input (B, T, C)."""
        raise NotImplementedError

    def projections(self, model, layer: int) -> Projections:
        """The trained W_Q (nh·d, C), W_K and W_V (n_kv·d, C) and W_O (C, nh·d) of one layer, as torch.nn.Linear
        stores them (a Linear without bias given zeros)."""
        raise NotImplementedError

    def attention_output(self, model, layer: int, output: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """(B, T, C) the attention block's output, from W_O's output and the layer's input."""
        raise NotImplementedError

    def run_layer(self, model, layer: int, hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """(B, T, C) one whole layer of the model run on its input, with the mask its forward pass makes."""
        raise NotImplementedError

    def reference(self, model, layer: int, residual: torch.Tensor, attention_mask: torch.Tensor) -> ReferenceAttention:
        """What transformers' own attention code computes for the layer, given its input and the (B, T) mask."""
        raise NotImplementedError

    def layer_with_heads_off(self, model, layer: int, hidden: torch.Tensor, attention_mask: torch.Tensor,
                             keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One whole layer run on its input hidden (B, T, C) with the mask the family was trained with (padding
        from attention_mask (B, T)), every head's context multiplied by keep (B, nh) before W_O: 0 switches a
        head off. Returns the attention block's output and the layer's output, (B, T, C) each. The model's own
        modules are run and nothing in the model is changed (no hook: it is shared by every thread)."""
        raise NotImplementedError

    def block_parts(self, model, layer: int) -> BlockParts:
        """Layer `layer`'s norms and MLP, for the block around its attention (attention.dissect.block)."""
        raise NotImplementedError

    def language_model_head(self, model, tokenizer, weights: dict[str, torch.Tensor]) -> LanguageModelHead:
        """The checkpoint's language-model head, made of weights (its tensors whose keys start with lm_head_prefix,
        read apart from the model) to fit model; MissingHead when the checkpoint has none, ValueError (saying
        why) when it does not fit."""
        raise NotImplementedError
