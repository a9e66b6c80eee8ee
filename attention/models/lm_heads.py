"""The language-model head a checkpoint was trained with, read apart from the model it sits on.

BERT's (the masked-language-model head) guesses the word behind a [MASK]; GPT-2's guesses the token after the
text. Each family says where its head is in the checkpoint and how it scores (attention.models.families); here its
few weights are read from the weights file alone, and the head is put on the model the rest of the page
loaded (attention.models.loading.load_model) at each use: whoever keeps the head keeps no second copy of the model.

Letters used in shape comments: C hidden size, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention.models.checkpoints import read_weights
from attention.models.families import Family, LanguageModelHead, MissingHead
from attention.models.loading import BUNDLED_MODEL, LoadedModel, ModelLoadError, load_model, weights_path
from attention.stages.settings import ModelShape


class NoLanguageModelHead(ModelLoadError):
    """The checkpoint carries no language-model head to guess tokens with (an encoder saved alone)."""


@dataclass(frozen=True, eq=False)
class LanguageModel:
    """A model with its language-model head, ready for inference: the model as loaded (eval mode, eager attention,
    no gradients, shared with the rest of the page) and the head on top of it."""

    model: LoadedModel
    head: LanguageModelHead

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def family(self) -> Family:
        return self.model.family

    @property
    def tokenizer(self):
        return self.model.tokenizer

    @property
    def shape(self) -> ModelShape:
        return self.model.shape

    @property
    def max_tokens(self) -> int:
        return self.model.max_tokens

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., C) the last layer's output -> (..., V) the head's score of every token."""
        return self.head.logits(self.model.model, hidden)


def load_language_model(name: str, loaded: LoadedModel | None = None) -> LanguageModel:
    """A model with its language-model head, or NoLanguageModelHead if its checkpoint has none.

    loaded: the same checkpoint's model, already loaded (attention.models.loading.load_model); then only the head's few
    weights are read and put on top of it, so the server holds one copy of the model.
    """
    if loaded is None:
        loaded = load_model(name)
    return LanguageModel(loaded, load_head(name, loaded))


def load_head(name: str, loaded: LoadedModel) -> LanguageModelHead:
    """The language-model head in name's weights, made to fit loaded (the same checkpoint's model, of which it
    keeps nothing); NoLanguageModelHead when the checkpoint has none."""
    family = loaded.family
    try:
        return family.language_model_head(loaded.model, loaded.tokenizer, _head_weights(name, family.lm_head_prefix))
    except MissingHead as missing:
        raise NoLanguageModelHead(f"{BUNDLED_MODEL if name == BUNDLED_MODEL else repr(name)} {missing}") from None
    except ValueError as error:
        raise ModelLoadError(f"{name!r} cannot guess tokens: {error}.") from error


def _head_weights(name: str, prefix: str) -> dict[str, torch.Tensor]:
    """{key: tensor} of the keys starting with prefix in name's weights file, and nothing else."""
    return read_weights(weights_path(name), lambda key: key.startswith(prefix))
