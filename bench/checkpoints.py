"""Checkpoints the benchmark builds for itself, offline, from the bundled model's tokenizer and weights.

- bert_base_random: bert-base's size (12 layers, 12 heads, hidden 768, about 440 MB) with random
  weights, for the server's memory; the numbers are meaningless, the tensors are the real size.
- bundled_with_mlm_head: the bundled all-MiniLM-L6-v2 encoder under a masked-language-model head
  with random weights, so that the "switching heads off" view (which needs that head) has toggles to
  move at the bundled model's size. Its guesses are nonsense; its cost is the real one.
- tiny_gpt2 (harness/checkpoints.py, which the tests share): a tiny random GPT-2 with a byte-level BPE
  tokenizer trained offline on a few sentences, for the decoder's page figures; tiny_llama, a random Llama with
  the same tokenizer, for the controls a Llama changes.
- gpt2_small_random: gpt2's size (12 layers, 12 heads, 768, 1024 positions, vocabulary 50257, about 500 MB)
  with random weights and that tokenizer, for the server's memory.
"""

from __future__ import annotations

from pathlib import Path

from attention.models.loading import bundled_model_path
from harness.checkpoints import gpt2_tokenizer, save_gpt2, tiny_gpt2, tiny_llama

__all__ = ["bert_base_random", "bundled_with_mlm_head", "gpt2_small_random", "tiny_gpt2", "tiny_llama"]


def bert_base_random(folder: Path) -> Path:
    """Save a BertModel of bert-base's shape with random weights, and the bundled tokenizer, in folder."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from attention.models.loading import RANDOM_WEIGHTS

    tokenizer = AutoTokenizer.from_pretrained(bundled_model_path())
    config = BertConfig(vocab_size=len(tokenizer))  # defaults: bert-base's 12 layers, 12 heads, hidden 768
    setattr(config, RANDOM_WEIGHTS, True)  # in its config.json: the page says its numbers are no trained model's
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


def gpt2_small_random(folder: Path) -> Path:
    """Save a GPT2LMHeadModel of gpt2's shape with random weights, and the tokenizer trained offline, in folder.

    The vocabulary is gpt2's 50257 rows, so the embedding (and the LM head tied to it) weigh what gpt2's do; the
    tokenizer knows its first few hundred only, which is all a memory figure needs.
    """
    from transformers import GPT2Config

    tokenizer = gpt2_tokenizer()
    config = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    return save_gpt2(folder, config, tokenizer)
