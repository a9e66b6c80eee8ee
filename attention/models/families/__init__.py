"""The model families the core dissects, one module each behind one small seam (attention.models.families.base.Family).

transformers keeps modeling_bert.py, modeling_gpt2.py and modeling_llama.py apart and lets AutoModel choose by
the config's model_type; so does this package. Everything that differs between an encoder and a decoder (where
the embeddings come from, what a layer's attention reads, how its weights are stored, which mask it was trained
with, how positions enter, how many key and value heads there are, how its tokens read) is answered by a Family;
the trace, the outline, the proof and the experiments ask it and never test which family they hold.
"""

from __future__ import annotations

from attention.models.families.base import Family, LanguageModelHead, MissingHead, ReferenceAttention
from attention.models.families.bert import BERT
from attention.models.families.gpt2 import GPT2
from attention.models.families.llama import LLAMA, MISTRAL, QWEN2

FAMILIES: dict[str, Family] = {family.name: family for family in (BERT, GPT2, LLAMA, QWEN2, MISTRAL)}


def family_named(name: str) -> Family:
    """The family of a config's model_type; KeyError naming the families there are."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"no model family {name!r}; the families are {', '.join(FAMILIES)}") from None


__all__ = ["BERT", "FAMILIES", "GPT2", "LLAMA", "MISTRAL", "QWEN2", "Family", "LanguageModelHead", "MissingHead",
           "ReferenceAttention", "family_named"]
