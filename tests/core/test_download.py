"""Fetching a Hub model with progress, against a fake Hub on loopback (tests/fake_hub.py): no network.

The downloads are real huggingface_hub downloads into a temporary cache; only the server is fake.
"""

from __future__ import annotations

import threading

import pytest

from attention.models.download import DownloadProgress, Downloads, download
from attention.models.hub import FILES, WEIGHTS, in_cache, is_cached
from attention.models.loading import ALLOWED_MODELS_ENV, ModelLoadError, load_model
from harness.server import free_port
from tests.fake_hub import FakeHub, save_hub_bert

REPO = "tiny-org/tiny-bert"


@pytest.fixture(scope="module")
def hub_checkpoint(tmp_path_factory):
    return save_hub_bert(tmp_path_factory.mktemp("hub-bert"))


@pytest.fixture
def online(monkeypatch, tmp_path):
    """Downloads allowed (conftest switches them off for every other test), REPO allowed, an empty cache."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv(ALLOWED_MODELS_ENV, REPO)
    return tmp_path / "hf-cache"


@pytest.fixture
def hub(hub_checkpoint):
    with FakeHub(REPO, hub_checkpoint, bytes_per_second=40e6) as hub:
        yield hub


def served_total(hub: FakeHub) -> int:
    return sum(hub.size(file) for file in FILES if file in hub.files)


def test_download_reports_progress_up_to_the_total_and_loads(hub, online):
    cache = online
    assert not is_cached(REPO, cache_dir=cache)
    seen: list[DownloadProgress] = []

    folder = download(REPO, seen.append, endpoint=hub.url, cache_dir=cache)

    total = served_total(hub)
    assert seen[0] == DownloadProgress(0, total)
    assert seen[-1] == DownloadProgress(total, total)
    assert all(p.total == total for p in seen)
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    small_files = total - hub.size(WEIGHTS)
    assert any(small_files < p.done < total for p in seen), "no progress inside the weights file"
    assert is_cached(REPO, cache_dir=cache)
    assert load_model(str(folder)).shape.num_heads == 4
    # Only what a BertModel and its tokenizer need: never pytorch_model.bin and the like.
    # (The other GETs are snapshot_download's questions to the API: the model's info and its file tree.)
    fetched = {path.rsplit("/", 1)[-1] for method, path in hub.requests if method == "GET" and "/resolve/" in path}
    assert fetched == {file for file in FILES if file in hub.files}


def test_a_model_too_large_for_the_budget_is_refused_before_any_file_is_fetched(hub, online):
    cache = online
    weights = hub.size(WEIGHTS)
    with pytest.raises(ModelLoadError, match="MB of weights, more than the .* memory budget leaves"):
        download(REPO, endpoint=hub.url, cache_dir=cache, max_weights_bytes=weights - 1)
    assert not any(in_cache(REPO, file, cache_dir=cache) for file in FILES)
    assert download(REPO, endpoint=hub.url, cache_dir=cache, max_weights_bytes=weights).is_dir()


def test_a_cached_model_is_not_fetched_again(hub, online):
    download(REPO, endpoint=hub.url, cache_dir=online)
    seen: list[DownloadProgress] = []
    download(REPO, seen.append, endpoint=hub.url, cache_dir=online)
    assert hub.fetched(WEIGHTS) == 1
    assert seen[-1].done == seen[-1].total == served_total(hub)


def test_an_interrupted_download_says_so_and_a_retry_succeeds(hub, online):
    hub.interrupt_after(3_000_000)  # mid-weights; the Hub then stays down until healed
    with pytest.raises(ModelLoadError) as raised:
        download(REPO, endpoint=hub.url, cache_dir=online)
    message = str(raised.value)
    assert f"The download of {REPO!r} stopped after" in message
    assert "HTTP 503" in message and "choose the model again" in message
    assert not is_cached(REPO, cache_dir=online)

    hub.heal()
    seen: list[DownloadProgress] = []
    download(REPO, seen.append, endpoint=hub.url, cache_dir=online)
    assert seen[-1].done == served_total(hub)
    assert is_cached(REPO, cache_dir=online)


def test_an_unreachable_hub_says_what_to_do(online):
    nowhere = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ModelLoadError, match="could not be reached .no connection to the Hub.") as raised:
        download(REPO, endpoint=nowhere, cache_dir=online)
    assert "bundled model" in str(raised.value)


def test_a_server_that_may_not_download_says_so_at_once(online, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelLoadError, match="could not be loaded.*HF_HUB_OFFLINE is set"):
        download(REPO, cache_dir=online)


def test_only_allowed_hub_models_are_downloaded(online):
    with pytest.raises(ModelLoadError, match="Unknown model"):
        download("someone/not-allowed", cache_dir=online)


def test_a_repository_without_safetensors_weights_is_refused(hub_checkpoint, online, tmp_path):
    folder = tmp_path / "no-weights"
    folder.mkdir()
    for file in ("config.json", "tokenizer.json"):
        (folder / file).write_bytes((hub_checkpoint / file).read_bytes())
    with FakeHub(REPO, folder) as hub, pytest.raises(ModelLoadError, match="has no model.safetensors"):
        download(REPO, endpoint=hub.url, cache_dir=online)


def test_a_class_asking_at_once_starts_one_download(hub, online):
    """The page's download manager: 30 sessions asking for the same model share one download thread."""
    manager = Downloads(endpoint=hub.url, cache_dir=str(online))
    jobs = []
    askers = [threading.Thread(target=lambda: jobs.append(manager.start(REPO))) for _ in range(30)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()

    assert len({id(job) for job in jobs}) == 1
    job = jobs[0]
    assert job.wait(60)
    assert job.succeeded, job.error
    assert job.progress == DownloadProgress(served_total(hub), served_total(hub))
    assert hub.fetched(WEIGHTS) == 1
    assert manager.start(REPO) is job  # a finished download is not started again


def test_a_failed_download_is_retried_by_the_next_request(hub, online):
    manager = Downloads(endpoint=hub.url, cache_dir=str(online))
    hub.interrupt_after(1_000_000)
    failed = manager.start(REPO)
    assert failed.wait(60)
    assert failed.failed and "stopped after" in failed.error

    hub.heal()
    retry = manager.start(REPO)
    assert retry is not failed
    assert retry.wait(60)
    assert retry.succeeded, retry.error


def test_a_cached_hub_model_loads_without_asking_the_hub(hub, online, monkeypatch):
    """Once downloaded, a model loads from the cache alone: asking the Hub first costs minutes of
    retries when it is down. The Hub here is up, and must not be asked anything."""
    from huggingface_hub import constants

    download(REPO, endpoint=hub.url, cache_dir=online)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(online))
    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    asked_before = len(hub.requests)

    loaded = load_model(REPO)

    assert loaded.shape.num_heads == 4
    assert hub.requests[asked_before:] == []
