"""A deployer's BERT folder whose config.json holds values of the wrong kind: refused as a ModelLoadError naming
the field and the file (what the page falls back on), never a TypeError from deep in torch.

Each case is the tiny BERT's real folder (weights, tokenizer) with one change to its config.json.
"""

from __future__ import annotations

import json
import shutil

import pytest

from attention.models.families.bert_config import BertConfig
from attention.models.loading import ModelLoadError, load_model

LEFT_OUT = object()  # a field's value in bad_folder: the field is not in the file

WRONG_KIND = {  # field: a value of the wrong kind, as a hand-edited or generated config.json may hold
    "num_attention_heads": "4",
    "hidden_size": -32,
    "num_hidden_layers": [2],
    "intermediate_size": 0,
    "vocab_size": 30522.5,
    "max_position_embeddings": True,
    "type_vocab_size": None,
    "layer_norm_eps": "1e-12",
    "hidden_act": ["gelu"],
    "position_embedding_type": {"kind": "absolute"},
    "is_decoder": "no",
}


def bad_folder(tmp_path, tiny_checkpoint, **changes) -> str:
    """The tiny BERT's folder with config.json changed (a field whose value is LEFT_OUT is taken out)."""
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "bad-bert")
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    config = {key: value for key, value in config.items() if value is not LEFT_OUT}
    (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


@pytest.mark.parametrize(("field", "value"), WRONG_KIND.items(), ids=WRONG_KIND.keys())
def test_a_value_of_the_wrong_kind_is_refused_naming_the_field_and_the_file(tmp_path, tiny_checkpoint, field, value):
    folder = bad_folder(tmp_path, tiny_checkpoint, **{field: value})
    with pytest.raises(ValueError, match=f"^{field} in .*config.json.* must be "):
        BertConfig.read(tmp_path / "bad-bert" / "config.json")
    with pytest.raises(ModelLoadError) as refused:
        load_model(folder)
    assert field in str(refused.value) and folder in str(refused.value)
    assert f"got {value!r}" in str(refused.value)


@pytest.mark.parametrize(("changes", "says"), [
    ({"hidden_size": 30}, "its hidden size 30 is not a multiple of its 4 heads"),
    ({"num_attention_heads": LEFT_OUT}, "its hidden size 32 is not a multiple of its 12 heads"),  # transformers' 12
    ({"num_hidden_layers": LEFT_OUT}, "Missing key(s)"),  # 12 layers by default: the weights hold 2
], ids=["hidden size not a multiple of the heads", "heads left out", "layers left out"])
def test_values_that_do_not_fit_together_or_the_weights_are_refused(tmp_path, tiny_checkpoint, changes, says):
    with pytest.raises(ModelLoadError) as refused:
        load_model(bad_folder(tmp_path, tiny_checkpoint, **changes))
    assert says in str(refused.value)


def test_the_kinds_a_real_config_holds_are_read_as_they_are(tiny_checkpoint):
    config = BertConfig.read(tiny_checkpoint / "config.json")
    assert (config.hidden_size, config.num_attention_heads, config.num_hidden_layers) == (32, 4, 2)
    assert config.layer_norm_eps == pytest.approx(1e-12) and config.is_decoder is False
