"""gpt2 and distilgpt2 from the Hub: the files fetched, and whether their weights fit beside the bundled model.

Against a fake Hub on loopback (tests/fake_hub.py) serving the tiny GPT-2 (harness/checkpoints.py) as the Hub's
gpt2 repository holds it, with the copies the page must never fetch beside it: no network.
"""

from __future__ import annotations

import shutil

import pytest

from attention.models.download import Downloads, download
from attention.models.hub import FILES, WEIGHTS, in_cache, is_cached
from attention.models.loading import ALLOWED_MODELS_ENV
from components.caches import models
from components.caches.memory_budget import MEMORY_ENV, memory_budget
from tests.fake_hub import FakeHub

REPO = "tiny-org/tiny-gpt2"
# What GPT2Model and its tokenizer read (attention/models/hub.py)
NEEDED = {"config.json", "tokenizer_config.json", "tokenizer.json", "vocab.json", "merges.txt", WEIGHTS}
# What the Hub's gpt2 repository holds beside them: other frameworks' copies of the weights, the 64-token
# TFLite exports, the generation settings (the page never generates), the model card
NEVER = ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "rust_model.ot", "64.tflite", "64-8bits.tflite",
         "64-fp16.tflite", "model.onnx", "generation_config.json", "README.md")
# The size of model.safetensors in the Hub's gpt2 repository (openai-community/gpt2), in bytes. It holds every
# layer's causal mask as a buffer besides the 124 M parameters (50 MB of the 548).
GPT2_WEIGHTS_BYTES = 548_105_171


@pytest.fixture(scope="module")
def repository(tiny_gpt2_checkpoint, tmp_path_factory):
    """The tiny GPT-2's folder, with small stand-ins for the files of NEVER."""
    folder = tmp_path_factory.mktemp("hub-gpt2")
    for path in tiny_gpt2_checkpoint.iterdir():
        shutil.copy(path, folder)
    for file in NEVER:
        if not (folder / file).exists():
            (folder / file).write_bytes(b"not for the page\n")
    assert NEEDED | set(NEVER) == {path.name for path in folder.iterdir()}
    return folder


@pytest.fixture
def online(monkeypatch, tmp_path):
    """Downloads allowed (conftest switches them off for every other test), REPO allowed, an empty cache."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv(ALLOWED_MODELS_ENV, REPO)
    return tmp_path / "hf-cache"


def fetched_files(hub: FakeHub) -> set[str]:
    return {path.rsplit("/", 1)[-1] for method, path in hub.requests if method == "GET" and "/resolve/" in path}


def test_a_gpt2_download_fetches_what_the_model_and_its_tokenizer_read_and_nothing_else(repository, online):
    from transformers import AutoTokenizer, GPT2LMHeadModel

    cache = online
    with FakeHub(REPO, repository) as hub:
        assert not is_cached(REPO, cache_dir=cache)
        download(REPO, endpoint=hub.url, cache_dir=cache)
        assert fetched_files(hub) == NEEDED
        assert all(in_cache(REPO, file, cache_dir=cache) for file in NEEDED)
        assert not any(in_cache(REPO, file, cache_dir=cache) for file in NEVER)
        assert is_cached(REPO, cache_dir=cache)

        # From the cache alone, as the page loads a downloaded model: the LM head, the tokenizer, no question asked.
        asked_before = len(hub.requests)
        model = GPT2LMHeadModel.from_pretrained(REPO, cache_dir=cache, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(REPO, cache_dir=cache, local_files_only=True)
        assert hub.requests[asked_before:] == []
    source = AutoTokenizer.from_pretrained(repository)
    text = "the cat sat, zebra é\nnew"
    assert tokenizer(text)["input_ids"] == source(text)["input_ids"]
    assert tokenizer.tokenize(text) == source.tokenize(text)
    assert (model.config.n_layer, model.config.n_head) == (2, 4)


@pytest.mark.parametrize("kept", [("tokenizer.json",), ("vocab.json", "merges.txt")])
def test_either_way_of_writing_a_gpt2_tokenizer_is_enough(repository, online, tmp_path, kept):
    from transformers import AutoTokenizer

    folder = tmp_path / "repository"
    folder.mkdir()
    for file in ("config.json", WEIGHTS, *kept):
        shutil.copy(repository / file, folder)
    with FakeHub(REPO, folder) as hub:
        download(REPO, endpoint=hub.url, cache_dir=online)
        assert fetched_files(hub) == {"config.json", WEIGHTS, *kept}
    assert is_cached(REPO, cache_dir=online)
    tokenizer = AutoTokenizer.from_pretrained(REPO, cache_dir=online, local_files_only=True)
    assert tokenizer.tokenize(" cat") == ["Ġcat"]


def test_vocab_json_without_its_merges_is_no_tokenizer(repository, online, tmp_path):
    from attention.models.loading import ModelLoadError

    folder = tmp_path / "repository"
    folder.mkdir()
    for file in ("config.json", WEIGHTS, "vocab.json"):
        shutil.copy(repository / file, folder)
    with FakeHub(REPO, folder) as hub, pytest.raises(ModelLoadError, match="has no tokenizer: none of tokenizer"):
        download(REPO, endpoint=hub.url, cache_dir=online)
    assert fetched_files(hub) == set()


def room_bytes(monkeypatch, budget) -> int:
    """What the page's own computation leaves for a model beside the bundled one, under budget."""
    monkeypatch.setattr(models, "BUDGET", budget)
    return models.model_room_bytes()


@pytest.mark.parametrize(("setting", "container_bytes"), [("2700", None), ("", 2_700_000_000)],
                         ids=["2700 MB set", "a 2.7 GB container without a setting"])
def test_gpt2_fits_beside_the_bundled_model_on_a_2_7_gb_deploy(monkeypatch, tmp_path, setting, container_bytes):
    """Streamlit Community Cloud's largest allowance, 2.7 GB: set by the deployer, or read off the container's
    limit, which is what the page does by default (2.7e9 bytes: 2574 MB of 2**20)."""
    limit = tmp_path / "memory.max"
    if container_bytes:
        limit.write_text(f"{container_bytes}\n")
    budget = memory_budget({MEMORY_ENV: setting} if setting else {}, [limit])
    assert budget.total_mb in (2700, 2574)
    assert room_bytes(monkeypatch, budget) >= GPT2_WEIGHTS_BYTES


def test_on_a_1_gb_budget_gpt2_is_refused_before_any_download_with_what_fits(repository, online, monkeypatch):
    room = room_bytes(monkeypatch, memory_budget({MEMORY_ENV: "1024"}, []))
    assert room < GPT2_WEIGHTS_BYTES
    with FakeHub(REPO, repository, claimed_sizes={WEIGHTS: GPT2_WEIGHTS_BYTES}) as hub:
        manager = Downloads(endpoint=hub.url, cache_dir=str(online), max_weights_bytes=room)  # as the page makes it
        job = manager.start(REPO)
        assert job.wait(60)
        assert fetched_files(hub) == set(), "a file was fetched for a model that cannot load"
    assert job.failed
    assert f"{REPO!r} has 523 MB of weights, more than the {room / 2**20:,.0f} MB" in job.error
    assert "Models up to that size fit" in job.error
    assert not any(in_cache(REPO, file, cache_dir=online) for file in FILES)
