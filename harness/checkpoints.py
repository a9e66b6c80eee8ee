"""Decoder checkpoints built offline (GPT-2, and a Llama with grouped-query attention and RoPE): a byte-level BPE
tokenizer trained here on a few sentences, random weights.

The Hub cannot be reached where the tests run, and no GPT-2 ships in a package as the bundled BERT does, so
the tests (tiny, for shape logic and downloads) and the benchmarks (tiny for page speed, gpt2's real size for
memory, bench/checkpoints.py) build their own. The tokenizer is GPT-2's kind: bytes mapped to printable
characters ("Ġ" for a space), then merges learnt from SENTENCES; any text encodes, since every byte is in
its alphabet. Its words are few, so most text splits into short pieces: the shapes are the family's, the
numbers meaningless.

Here rather than in bench/ or tests/, which may not import each other (tests/tooling/test_architecture.py).
"""

from __future__ import annotations

from pathlib import Path

END_OF_TEXT = "<|endoftext|>"  # GPT-2's one special token: beginning, end and unknown alike
VOCABULARY_SIZE = 400  # 256 bytes, the special token, and the merges the sentences give (fewer than asked)
SENTENCES = (
    "The cat sat on the mat.",
    "The dog sat on the rug, and the cat watched it.",
    "A zebra ran across the field at dawn.",
    "The animal did not cross the street because it was too tired.",
    "Time flies like an arrow; fruit flies like a banana.",
    "She poured the milk into the cup and drank it.",
    "The river bank was muddy after the rain.",
    "He went to the bank to open an account.",
    "Attention lets every token look at the tokens before it.",
    "The model reads the text one token at a time.",
    "A small bird sang in the old oak tree.",
    "We walked home through the quiet streets at night.",
    "The teacher wrote the answer on the board.",
    "Students asked why the first token gets so much attention.",
    "The kettle boiled, and the kitchen filled with steam.",
    "My sister likes green tea with honey.",
    "The train to the city leaves at seven.",
    "Cats chase mice; dogs chase cats.",
    "The sun rose over the hills, and the fog lifted.",
    "Read the question twice before you write.",
    "The library opens at nine and closes at five.",
    "A new line starts here.\nAnother line follows it.",
    "Numbers like 12, 345 and 2024 are split into pieces.",
    "The café on the corner sells croissants.",
    "He said: \"Look back, never ahead.\"",
    "The children built a castle out of sand.",
    "It was the best of times, it was the worst of times.",
    "The quick brown fox jumps over the lazy dog.",
    "Rain fell all day, so we stayed inside and read.",
    "The word that comes next depends on the words before it.",
    "Two heads are better than one.",
    "The robot counted the tokens in the sentence.",
    "Open the window; the room is too warm.",
    "The old man and the sea.",
    "A cat, a dog and a zebra walked into a bar.",
    "Every layer mixes what the tokens have seen so far.",
)


def gpt2_tokenizer():
    """A transformers GPT2TokenizerFast whose byte-level BPE is trained on SENTENCES (the same every time): the
    tokenizer tokenizers' ByteLevelBPETokenizer trains, put together from its public parts, as that class holds its
    own out of reach."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import GPT2TokenizerFast

    byte_level = Tokenizer(models.BPE())
    byte_level.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    byte_level.decoder = decoders.ByteLevel()
    byte_level.post_processor = processors.ByteLevel(trim_offsets=False)
    byte_level.train_from_iterator(SENTENCES, trainer=trainers.BpeTrainer(
        vocab_size=VOCABULARY_SIZE, min_frequency=2, special_tokens=[END_OF_TEXT], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    # tokenizer_object: the trained vocabulary and merges themselves (a GPT2TokenizerFast made from the
    # vocab.json and merges.txt that save_model writes encoded every text to nothing)
    return GPT2TokenizerFast(tokenizer_object=byte_level, bos_token=END_OF_TEXT, eos_token=END_OF_TEXT,
                             unk_token=END_OF_TEXT)


def save_gpt2(folder: Path, config, tokenizer, *, seed: int = 0) -> Path:
    """Save a GPT2LMHeadModel of config with random weights (seeded) and tokenizer in folder, as the Hub's gpt2
    repository holds them: config.json, model.safetensors, tokenizer.json, and vocab.json with merges.txt."""
    import torch
    from transformers import GPT2LMHeadModel

    from attention.models.loading import RANDOM_WEIGHTS

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    setattr(config, RANDOM_WEIGHTS, True)  # in its config.json: the page says its numbers are no trained model's
    with torch.random.fork_rng(devices=[]):  # the caller's random numbers go on as if nothing had been drawn
        torch.manual_seed(seed)
        model = GPT2LMHeadModel(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)  # tokenizer.json and tokenizer_config.json
    tokenizer.backend_tokenizer.model.save(str(folder))  # vocab.json and merges.txt, the older form of the same
    return folder


def tiny_gpt2(folder: Path, *, n_layer: int = 2, n_head: int = 4, n_embd: int = 32, n_positions: int = 128,
              seed: int = 0) -> Path:
    """Save a tiny random GPT-2 (by default 2 layers, 4 heads of 8, at most 128 positions) in folder."""
    from transformers import GPT2Config

    tokenizer = gpt2_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=n_positions, n_embd=n_embd, n_layer=n_layer,
                        n_head=n_head, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    return save_gpt2(folder, config, tokenizer, seed=seed)


def tiny_llama(folder: Path, *, num_hidden_layers: int = 2, num_attention_heads: int = 4, num_key_value_heads: int = 2,
               hidden_size: int = 32, max_position_embeddings: int = 128, seed: int = 0) -> Path:
    """Save a tiny random Llama in folder, SmolLM2's kind at a toy's size: by default 2 layers, 4 query heads of 8
    sharing 2 key/value heads (grouped-query attention), RoPE of base 100,000, tied word embeddings, with the
    byte-level BPE of gpt2_tokenizer (SmolLM2's tokenizer is byte-level BPE too)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from attention.models.loading import RANDOM_WEIGHTS

    tokenizer = gpt2_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=num_hidden_layers, num_attention_heads=num_attention_heads,
                         num_key_value_heads=num_key_value_heads, max_position_embeddings=max_position_embeddings,
                         rope_parameters={"rope_type": "default", "rope_theta": 100000.0}, tie_word_embeddings=True,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         **{RANDOM_WEIGHTS: True})
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng(devices=[]):  # the caller's random numbers go on as if nothing had been drawn
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
        # transformers initialises the weights with std 0.02: every head of a 32-wide toy would then look evenly at
        # every key. Ten times that gives heads that pick keys, as trained ones do, so a wrong key or head shows.
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if name.endswith("proj.weight"):
                    parameter.normal_(0.0, 0.2)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)  # tokenizer.json and tokenizer_config.json
    return folder
