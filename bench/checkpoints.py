"""Checkpoints the benchmark builds for itself, offline, from the bundled model's tokenizer and weights.

- bert_base_random: bert-base's size (12 layers, 12 heads, hidden 768, about 440 MB) with random
  weights, for the server's memory; the numbers are meaningless, the tensors are the real size.
- bundled_with_mlm_head: the bundled all-MiniLM-L6-v2 encoder under a masked-language-model head
  with random weights, so that the "switching heads off" view (which needs that head) has toggles to
  move at the bundled model's size. Its guesses are nonsense; its cost is the real one.
"""

from __future__ import annotations

from pathlib import Path

from attention.models import bundled_model_path


def bert_base_random(folder: Path) -> Path:
    """Save a BertModel of bert-base's shape with random weights, and the bundled tokenizer, in folder."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(bundled_model_path())
    config = BertConfig(vocab_size=len(tokenizer))  # defaults: bert-base's 12 layers, 12 heads, hidden 768
    BertModel(config, add_pooling_layer=False).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def bundled_with_mlm_head(folder: Path) -> Path:
    """Save the bundled encoder with a freshly initialised masked-language-model head in folder."""
    from transformers import AutoTokenizer, BertForMaskedLM

    source = bundled_model_path()
    BertForMaskedLM.from_pretrained(source).save_pretrained(folder)  # the head: missing, so initialised afresh
    AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    return folder
