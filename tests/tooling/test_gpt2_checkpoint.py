"""The tiny GPT-2 the tests build offline (harness/checkpoints.py): GPT-2's shapes and tokenizer, built the same
every time, without touching the caller's random numbers."""

from __future__ import annotations

import torch

from harness.checkpoints import END_OF_TEXT, tiny_gpt2


def test_the_tiny_gpt2_loads_as_gpt2_with_its_trained_tokenizer(tiny_gpt2_checkpoint):
    from transformers import AutoTokenizer, GPT2LMHeadModel

    model = GPT2LMHeadModel.from_pretrained(tiny_gpt2_checkpoint, attn_implementation="eager")
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_checkpoint)
    config = model.config
    shape = (config.model_type, config.n_layer, config.n_head, config.n_embd, config.n_positions)
    assert shape == ("gpt2", 2, 4, 32, 128)
    assert config.vocab_size == len(tokenizer) <= 400
    assert config.bos_token_id == config.eos_token_id == tokenizer.convert_tokens_to_ids(END_OF_TEXT)
    text = "The cat sat on the mat, and a zebra ran.\nÉtoile ☃"
    ids = tokenizer(text)["input_ids"]
    assert tokenizer.decode(ids) == text, "byte-level: every text encodes and comes back whole"
    assert "Ġcat" in tokenizer.tokenize(text), "the merges learnt from the sentences are used"
    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits  # (1, T, vocabulary)
    assert logits.shape == (1, len(ids), len(tokenizer))


def test_the_tiny_gpt2_is_the_same_every_time_and_leaves_the_random_numbers_alone(tiny_gpt2_checkpoint, tmp_path):
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    folder = tiny_gpt2(tmp_path / "again")
    assert torch.equal(torch.rand(3), expected)
    files = sorted(path.name for path in folder.iterdir())
    assert files == sorted(path.name for path in tiny_gpt2_checkpoint.iterdir())
    assert all((folder / name).read_bytes() == (tiny_gpt2_checkpoint / name).read_bytes() for name in files)
