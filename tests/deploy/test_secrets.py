"""Settings from Streamlit secrets, as Streamlit Community Cloud passes them: a real server, a real session.

Community Cloud has no environment variables to set, only the app's secrets (a secrets.toml). Streamlit
copies every root-level secret into the environment before the page runs, so the page's settings,
read from the environment, can be given there. Here the server reads a secrets file of the test's
(`secrets.files`, set through STREAMLIT_SECRETS_FILES) with the default model, the local folders and
an extra Hub id, and a session opened over the websocket shows what they set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.server import streamlit_server
from harness.session_client import texts_and_models
from tests.pages import APP

pytestmark = pytest.mark.deploy


@pytest.fixture(scope="module")
def server(tiny_checkpoint, tmp_path_factory):
    secrets = tmp_path_factory.mktemp("secrets") / "secrets.toml"
    secrets.write_text(
        f'ATTENTION_ANATOMY_MODEL_DIRS = "{tiny_checkpoint}"\n'
        f'ATTENTION_ANATOMY_DEFAULT_MODEL = "{tiny_checkpoint}"\n'
        'ATTENTION_ANATOMY_ALLOWED_MODELS = "some-org/extra-bert"\n'
    )
    with streamlit_server(APP, env={"STREAMLIT_SECRETS_FILES": str(secrets)}) as base_url:
        yield base_url


def test_the_secrets_default_model_opens_a_plain_link(server, tiny_checkpoint):
    texts, options = texts_and_models(server)
    assert any(f"{Path(tiny_checkpoint).name}: 2 layers × 4 heads" in text for text in texts), texts  # the folder
    assert Path(tiny_checkpoint).name in options  # shown by its folder's name (its path in the help)


def test_the_secrets_allow_list_is_offered(server):
    _, options = texts_and_models(server)
    assert "some-org/extra-bert" in options
    assert "bert-base-uncased" in options  # added to the built-in list, not replacing it


def test_a_link_naming_the_bundled_model_still_opens_it(server):
    texts, _ = texts_and_models(server, "model=all-MiniLM-L6-v2")
    assert any("all-MiniLM-L6-v2: 6 layers × 12 heads" in text for text in texts), texts
