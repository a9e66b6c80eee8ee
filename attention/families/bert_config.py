"""A BERT checkpoint's config.json, read without transformers (whose import a new server's first heatmap waited on).

BertConfig holds what the encoder (attention.families.bert_modules) reads, with the defaults of transformers'
BertConfig for whatever a config.json leaves out, and the whole file, from which the proof builds transformers'
own config (tests/test_bert_modules.py checks that both read a config alike).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path


@dataclass(frozen=True)
class BertConfig:
    values: dict = field(repr=False, compare=False)  # config.json as it was read
    model_type: str = "bert"
    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    # Kinds of BERT the encoder refuses (bert_modules.unsupported); transformers 5 reads them as extra attributes.
    position_embedding_type: str = "absolute"
    is_decoder: bool = False
    add_cross_attention: bool = False

    @classmethod
    def read(cls, path: Path) -> BertConfig:
        """The config in a config.json; ValueError when it is no JSON object."""
        values = json.loads(path.read_text())
        if not isinstance(values, dict):
            raise ValueError(f"{str(path)!r} holds no JSON object")
        read = {item.name for item in fields(cls)} - {"values"}
        return cls(values=values, **{key: value for key, value in values.items() if key in read})

    def transformers_config(self):
        """transformers' own BertConfig of the same file, eager attention (the proof's reference)."""
        from transformers import BertConfig as TransformersBertConfig

        config = TransformersBertConfig.from_dict(self.values)
        config._attn_implementation = "eager"
        return config
