"""What a model family must answer for the core to dissect its attention: the seam between the core and a model.

A family is a set of answers about one kind of checkpoint, read off the transformers model it loaded: how
text becomes the stream of vectors the layers read, what one layer's attention reads from that stream, its
trained W_Q, W_K, W_V and W_O, the mask it was trained with, what transformers itself computes for the
layer (the proof's reference), and how its tokens read. Nothing here holds a model: every method takes it.

Letters used in shape comments: B batch, T tokens, C hidden size, nh heads, d head size, L layers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from attention.projections import Projections
    from attention.settings import ModelShape

Record = Callable[[str, str, str, "torch.Tensor | np.ndarray"], torch.Tensor]  # (name, stage, formula, value)


@dataclass(frozen=True)
class ReferenceAttention:
    """What transformers' own modules compute for one layer's attention, all heads."""

    weights: torch.Tensor  # (B, nh, T, T) the attention probabilities
    context: torch.Tensor  # (B, T, nh·d) every head's context side by side, before W_O
    attention_output: torch.Tensor  # (B, T, C) what the layer's attention block hands on (residual included)


class Family:
    """One kind of transformer: the answers the core asks of a checkpoint of it. Subclasses answer them."""

    name: str  # the config's model_type: "bert", "gpt2"
    label: str  # as a reader calls it: "BERT", "GPT-2"
    reads: str  # how its tokens look at each other, in a few words for the page: "a decoder: …"
    sink_words: str  # its sink tokens (sinks()), as a sentence names them: "[CLS] and [SEP]", "the first token"
    own_mask: str  # the mask it was trained with, as attention.masks names it: "none" (padding only) or "causal"
    reads_pairs: bool  # whether it reads a sentence pair (segment ids): BERT does, GPT-2 reads one text
    byte_level: bool  # whether its tokens are byte-level BPE (shown with a mark for a leading space)
    model_class_name: str  # the transformers class without a head: "BertModel", "GPT2Model"
    load_kwargs: dict  # what that class's from_pretrained takes besides the checkpoint
    input_steps: tuple[tuple[str, str], ...]  # (name, formula) of the inputs a trace records, in order
    embedding_steps: tuple[tuple[str, str], ...]  # (name, formula) of the embeddings, the last "embeddings"
    attention_output_formula: str  # how the attention block's output is made of W_O's and the residual

    def check_config(self, config) -> None:
        """ValueError, saying why, for a checkpoint of this family whose attention the core does not compute."""

    def shape(self, config) -> ModelShape:
        from attention.settings import ModelShape

        return ModelShape(num_layers=config.num_hidden_layers, num_heads=config.num_attention_heads,
                          hidden_size=config.hidden_size, family=self.name, own_mask=self.own_mask)

    def prepare_tokenizer(self, tokenizer) -> None:
        """Make the freshly loaded tokenizer able to pad a batch, if it cannot."""

    def readable(self, tokens: list[str]) -> tuple[str, ...]:
        """The tokens as the page shows them."""
        from attention.readable import readable_tokens

        return readable_tokens(tokens, self.byte_level)

    def sinks(self, special_tokens_mask: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """(B, T) bool: the tokens where the family's heads park attention they spend nowhere else."""
        raise NotImplementedError

    def forward(self, model, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                attention_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The model run once: L + 1 x (B, T, C), where element ℓ < L is the input of layer ℓ."""
        raise NotImplementedError

    def embed(self, model, input_ids: torch.Tensor, token_type_ids: torch.Tensor, record: Record) -> torch.Tensor:
        """(B, T, C) the embeddings, each of embedding_steps recorded as it is made."""
        raise NotImplementedError

    def layer_input_formula(self, layer: int) -> str:
        """How the layer's attention input X is made, as the shapes panel writes it."""
        raise NotImplementedError

    def attention_input(self, model, layer: int, residual: torch.Tensor) -> torch.Tensor:
        """(B, T, C) what layer `layer`'s Q, K and V are projected from, given the layer's input (B, T, C)."""
        raise NotImplementedError

    def projections(self, model, layer: int) -> Projections:
        """The trained W_Q, W_K, W_V (nh·d, C) and W_O (C, nh·d) of one layer, as torch.nn.Linear stores them."""
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
