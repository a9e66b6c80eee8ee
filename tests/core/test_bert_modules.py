"""BERT's own encoder (attention/models/families/bert_modules.py) against transformers' BertModel on the same weights,
as minGPT's test_huggingface_import does: the same operations in the same order, so the same bits.

And what it is for: a new server computes its first heatmap without importing transformers' modelling code,
which only the proof imports (the import check runs in a new process, since this one has long imported it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
import torch

from attention.models.families.bert_config import BertConfig
from attention.models.loading import ModelLoadError, bundled_model_path, load_model
from attention.text.encoding import encode_batch
from tests.conftest import save_tiny_bert

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [("The cat sat on the mat because it was tired.", None), ("Short one.", "And a second sentence here.")]


def transformers_hidden_states(folder, encoding) -> tuple[torch.Tensor, ...]:
    from transformers import BertModel

    model = BertModel.from_pretrained(folder, attn_implementation="eager", add_pooling_layer=False).eval()
    with torch.inference_mode():
        return model(input_ids=torch.from_numpy(encoding.input_ids),
                     token_type_ids=torch.from_numpy(encoding.token_type_ids),
                     attention_mask=torch.from_numpy(encoding.attention_mask), output_hidden_states=True).hidden_states


def assert_same_bits(ours: tuple, theirs: tuple) -> None:
    assert len(ours) == len(theirs)
    for layer, (mine, reference) in enumerate(zip(ours, theirs, strict=True)):
        assert torch.equal(torch.from_numpy(mine), reference), f"layer {layer}'s input differs"


def test_the_bundled_bert_computes_every_layer_bit_for_bit_as_transformers_does(bundled):
    encoding = encode_batch(bundled, PAIRS)  # a sentence pair, and padding in the first row's batch-mate
    assert encoding.attention_mask.min() == 0
    assert_same_bits(encoding.hidden_states, transformers_hidden_states(bundled_model_path(), encoding))


def test_a_checkpoint_saved_with_its_masked_language_model_head_loads_its_encoder(tmp_path):
    folder = save_tiny_bert(tmp_path / "with-head", with_mlm_head=True)  # keys "bert.…" and "cls.predictions.…"
    loaded = load_model(str(folder))
    encoding = encode_batch(loaded, PAIRS)
    assert_same_bits(encoding.hidden_states, transformers_hidden_states(folder, encoding))


def test_an_old_pytorch_checkpoint_with_gamma_and_beta_loads_as_the_same_model(tmp_path, tiny_checkpoint):
    from safetensors.torch import load_file

    old = shutil.copytree(tiny_checkpoint, tmp_path / "old", ignore=shutil.ignore_patterns("model.safetensors"))
    weights = load_file(tiny_checkpoint / "model.safetensors")
    torch.save({key.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): tensor
                for key, tensor in weights.items()}, old / "pytorch_model.bin")
    encoding = encode_batch(load_model(str(old)), PAIRS)
    assert_same_bits(encoding.hidden_states, transformers_hidden_states(tiny_checkpoint, encoding))


def test_a_bert_whose_activation_is_not_computed_here_is_refused_with_the_reason(tmp_path):
    folder = save_tiny_bert(tmp_path / "silu", hidden_act="silu")
    with pytest.raises(ModelLoadError, match="activation 'silu'"):
        load_model(str(folder))


def test_weights_that_do_not_fit_the_config_are_refused_with_what_is_missing(tmp_path, tiny_checkpoint):
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "cut")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 3}))
    with pytest.raises(ModelLoadError, match="encoder.layer.2"):
        load_model(str(folder))


@pytest.mark.parametrize("written", [{}, {"hidden_size": 32, "num_attention_heads": 4, "layer_norm_eps": 1e-7,
                                      "hidden_act": "relu", "position_embedding_type": "relative_key"}],
                         ids=["nothing but the model type", "some settings"])
def test_a_config_json_reads_as_transformers_reads_it(tmp_path, written):
    from transformers import BertConfig as TransformersBertConfig

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", **written}))
    ours = BertConfig.read(tmp_path / "config.json")
    theirs = TransformersBertConfig.from_pretrained(tmp_path)
    for item in fields(BertConfig):
        if item.name != "values":
            assert getattr(ours, item.name) == getattr(theirs, item.name, item.default), item.name
    assert ours.transformers_config().to_dict() == theirs.to_dict()


def test_the_first_heatmap_needs_neither_transformers_nor_torch_dynamo_and_the_proof_brings_them():
    code = """
import json, sys
from attention.dissect.trace import layer_attention
from attention.text.encoding import encode
from attention.text.layer_inputs import next_layer_input
from attention.models.loading import load_model
from attention.dissect.parity import transformers_weights
from attention.stages.settings import TraceSettings
from attention.text.unknown import unknown_characters
loaded = load_model()
unknown_characters(loaded.tokenizer, "The cat sat on the mat.")
encoding = encode(loaded, "The cat sat on the mat.")
layer_attention(loaded, next_layer_input(loaded, encoding, 3), TraceSettings(layer=3))
heavy = ("transformers", "torch._dynamo")
before = [name for name in heavy if name in sys.modules]
transformers_weights(loaded, encoding, 3)
print(json.dumps([before, "transformers.modeling_utils" in sys.modules]))
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[], True]
