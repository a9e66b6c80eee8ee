"""A decoder's language-model head, read apart from its model: GPT-2's and a Llama's are the same but for the
names their model gives the final norm and the word embeddings.

Letters used in shape comments: C hidden size, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention.models.families.base import LanguageModelHead, MissingHead

LM_HEAD_WEIGHT = "lm_head.weight"  # the decoder (V, C) of a ...ForCausalLM, in a checkpoint only when it is not tied


@dataclass(frozen=True, eq=False)
class NextTokenHead(LanguageModelHead):
    """The final norm of the last layer's output, scored against the word embeddings (tied) or the checkpoint's own
    lm_head.weight. The norm and, when tied, the embeddings are the model's, looked up at each use by name."""

    decoder_weight: torch.Tensor | None  # (V, C) the checkpoint's own lm_head.weight; None: tied to the embeddings
    embeddings: str  # the model's word embeddings: GPT2Model's "wte", LlamaModel's "embed_tokens"
    final_norm: str  # the model's norm after its last layer: GPT2Model's "ln_f", LlamaModel's "norm"
    objective = "next"
    prompt = "Type a text for the model to continue."

    def logits(self, model, hidden):
        tied = getattr(model, self.embeddings).weight  # (V, C)
        decoder = tied if self.decoder_weight is None else self.decoder_weight  # (V, C)
        return torch.nn.functional.linear(getattr(model, self.final_norm)(hidden), decoder)  # (..., V): no bias

    def position(self, input_ids):
        if not input_ids:
            raise ValueError(self.prompt)
        return len(input_ids) - 1  # the last token's output is the guess of the one after it


def next_token_head(model, weights, embeddings: str, final_norm: str, load_instead: str) -> NextTokenHead:
    """The head of a decoder whose model names its word embeddings and final norm so; MissingHead, naming
    load_instead, when its embeddings are not tied and its checkpoint holds no decoder of its own."""
    config = model.config
    if config.tie_word_embeddings:  # as transformers ties them, whatever lm_head.weight the file holds
        return NextTokenHead(None, embeddings, final_norm)
    if LM_HEAD_WEIGHT not in weights:
        raise MissingHead(f"has no language-model head: its word embeddings are not tied to one and its checkpoint "
                          f"lacks {LM_HEAD_WEIGHT}, so it cannot guess the next token. Load {load_instead}.")
    decoder_weight = weights[LM_HEAD_WEIGHT]
    if decoder_weight.shape != (config.vocab_size, config.hidden_size):
        raise ValueError(f"its {LM_HEAD_WEIGHT} is not {config.vocab_size} tokens of {config.hidden_size} numbers")
    return NextTokenHead(decoder_weight.to(getattr(model, embeddings).weight.dtype), embeddings, final_norm)
