"""A BERT checkpoint's config.json, read without transformers (whose import a new server's first heatmap waited on).

BertConfig holds what the encoder (attention.models.families.bert_modules) reads, with the defaults of transformers'
BertConfig for whatever a config.json leaves out, and the whole file, from which the proof builds transformers'
own config (tests/core/test_bert_modules.py checks that both read a config alike).

A config.json is a deployer's file, or a Hub repository's: every value read is checked for its kind before the
encoder is built of it, so that a string of heads or a negative size is a ValueError naming the field and the file
(what the loader turns into a ModelLoadError, and the page into a fall-back to the bundled model), not a TypeError
from deep in torch.
"""

from __future__ import annotations

import json
import math
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
        """The config in a config.json; ValueError when it is no JSON object, or when a value read is not of its
        field's kind (_KINDS), naming the field and the file."""
        values = json.loads(path.read_text())
        if not isinstance(values, dict):
            raise ValueError(f"{str(path)!r} holds no JSON object")
        kinds = {item.name: item.type for item in fields(cls) if item.name != "values"}
        for key, value in values.items():
            if key in kinds:
                holds, says = _KINDS[kinds[key]]
                if not holds(value):
                    raise ValueError(f"{key} in {str(path)!r} must be {says}; got {value!r}")
        return cls(values=values, **{key: value for key, value in values.items() if key in kinds})

    def transformers_config(self):
        """transformers' own BertConfig of the same file, eager attention (the proof's reference)."""
        from transformers import BertConfig as TransformersBertConfig

        return TransformersBertConfig.from_dict(self.values, attn_implementation="eager")


# What a value of each kind of field must be (by its annotation above), and how the error says it. JSON's true and
# false are no sizes (bool is an int to Python); a size of 0 makes no layer, and a negative one no tensor.
_KINDS = {
    "int": (lambda value: type(value) is int and value >= 1, "a whole number, 1 or more"),
    "float": (lambda value: type(value) in (int, float) and 0 < value < math.inf, "a number above 0"),
    "str": (lambda value: isinstance(value, str), "a string"),
    "bool": (lambda value: isinstance(value, bool), "true or false"),
}
