"""A server given a small memory budget and a shorter allow-list: a real server, a real session.

ATTENTION_ANATOMY_MEMORY_MB leaves no room for a model beside the bundled one, so the local checkpoint
the link names is refused before it is read, with a notice saying why, and the page shows the bundled
model; ATTENTION_ANATOMY_ALLOWED_MODELS takes bert-large-uncased off the list.
"""

from __future__ import annotations

import pytest

from components.caches.memory_budget import MEMORY_ENV, RUNTIME_MB, SESSION_MB, SESSIONS, WORK_MB
from harness.server import streamlit_server
from harness.session_client import texts_and_models
from tests.pages import APP

pytestmark = pytest.mark.deploy

# Just above what the runtime, the sessions and the work in progress take: the weights get less than the
# bundled model's 87 MB, so no other model fits.
SMALL_MB = RUNTIME_MB + SESSIONS * SESSION_MB + WORK_MB + 60


@pytest.fixture(scope="module")
def server(tiny_checkpoint):
    env = {MEMORY_ENV: str(SMALL_MB), "ATTENTION_ANATOMY_MODEL_DIRS": str(tiny_checkpoint),
           "ATTENTION_ANATOMY_ALLOWED_MODELS": "-bert-large-uncased, some-org/extra-bert"}
    with streamlit_server(APP, env=env) as base_url:
        yield base_url


def test_a_model_that_does_not_fit_is_refused_with_why_and_the_bundled_one_shown(server, tiny_checkpoint):
    texts, _ = texts_and_models(server, {"model": str(tiny_checkpoint)})
    notice = next((text for text in texts if "MB of weights, more than the 0 MB" in text), None)
    assert notice is not None, texts
    assert "memory budget" in notice and "Showing the bundled model instead." in notice
    assert any("all-MiniLM-L6-v2: 6 layers × 12 heads" in text for text in texts), texts


def test_the_allow_list_takes_models_off_as_well_as_adding_them(server):
    _, options = texts_and_models(server, {})
    assert "bert-large-uncased" not in options
    assert "some-org/extra-bert" in options and "bert-base-uncased" in options
