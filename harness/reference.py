"""transformers' own model and tokenizer of a loaded checkpoint: the reference the core is checked against (tests)
and timed against (bench/trace_overhead.py's bare forward pass).

The core runs BERT on its own encoder (attention/models/families/bert_modules.py) and tokenizes with the tokenizers
library alone (attention/models/tokenizer.py), so neither LoadedModel.model nor LoadedModel.tokenizer is transformers'
for BERT: its reference is loaded from the same checkpoint, once a name. GPT-2's model is transformers' already.
"""

from __future__ import annotations

import functools
from collections.abc import Callable


@functools.cache
def _transformers_bert(name: str):
    from transformers import BertModel

    from attention.models.loading import resolve

    return BertModel.from_pretrained(resolve(name), attn_implementation="eager", add_pooling_layer=False).eval()


def transformers_model(loaded):
    """transformers' own model of loaded's checkpoint (eager attention, eval mode)."""
    return _transformers_bert(loaded.name) if loaded.family.name == "bert" else loaded.model


@functools.cache
def _transformers_tokenizer(name: str):
    from transformers import AutoTokenizer

    from attention.models.loading import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve(name))
    if tokenizer.pad_token is None:  # GPT-2's: a batch pads with <|endoftext|> on the right, as the core pads it
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    return tokenizer


def transformers_tokenizer(loaded):
    """transformers' own tokenizer of loaded's checkpoint, the reference for the core's."""
    return _transformers_tokenizer(loaded.name)


def bare_forward(loaded, text: str) -> Callable[[], object]:
    """transformers' own forward pass over the text, tokenized once beforehand by transformers' own tokenizer: a call
    runs it (torch's inference mode) and returns its output, attentions included."""
    import torch

    model = transformers_model(loaded)
    inputs = transformers_tokenizer(loaded)(text, return_tensors="pt")

    def run():
        with torch.inference_mode():
            return model(**inputs, output_attentions=True)

    return run
