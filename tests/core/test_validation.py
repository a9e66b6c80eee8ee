"""Bad settings and bad models are refused with a message that says what would be accepted."""

from __future__ import annotations

import numpy as np
import pytest

from attention.dissect.trace import build_trace
from attention.labs.counting import CountingConfig
from attention.models.loading import ModelLoadError, load_model, resolve
from attention.models.model_list import ALLOWED_MODELS_ENV, BUNDLED_MODEL, DEFAULT_ALLOWED_HUB_IDS, allowed_hub_ids
from attention.stages.limits import (
    PAGE_SEED,
    PAGE_TEMPERATURE,
    PAGE_WIN_SIZE,
    SEED,
    TEMPERATURE,
    WIN_SIZE_RANGE,
    IntRange,
    RealRange,
    require_choice,
)
from attention.stages.settings import SCALINGS, SIMILARITIES, SOURCES, ModelShape, TraceSettings
from attention.text.encoding import encode, encode_batch
from components.page import page_state
from components.private_hooks import attention_implementation

BUNDLED_SHAPE = ModelShape(num_layers=6, num_heads=12, hidden_size=384)
TINY_SHAPE = ModelShape(num_layers=2, num_heads=4, hidden_size=32)

# settings, then what the message must mention: the valid range or every valid choice.
BAD_SETTINGS = {
    "layer too high": (dict(layer=6), ["layer", "0 to 5", "6 layers"]),
    "layer negative": (dict(layer=-1), ["layer", "0 to 5"]),
    "layer not an int": (dict(layer=1.0), ["layer", "0 to 5"]),
    "layer a bool": (dict(layer=True), ["layer", "0 to 5"]),
    "head too high": (dict(head=12), ["head", "0 to 11", "12 heads"]),
    "head negative": (dict(head=-1), ["head", "0 to 11"]),
    "random head beyond C // head_dim": (dict(source="random", head_dim=100, head=3), ["head", "0 to 2"]),
    "identity has one head": (dict(source="identity", head=1), ["head", "0 to 0"]),
    "head_dim zero": (dict(source="random", head_dim=0), ["head_dim", "1 to 384"]),
    "head_dim negative": (dict(source="random", head_dim=-4), ["head_dim", "1 to 384"]),
    "head_dim above C": (dict(source="random", head_dim=385), ["head_dim", "1 to 384"]),
    "head_dim for bert": (dict(source="bert", head_dim=64), ["head_dim", "32", "12 heads"]),
    "temperature zero": (dict(scaling="temperature", temperature=0.0), ["temperature", "from 0.001 to 1000"]),
    "temperature negative": (dict(scaling="temperature", temperature=-0.5), ["temperature", "from 0.001 to 1000"]),
    "temperature nan": (dict(scaling="temperature", temperature=float("nan")), ["temperature", "from 0.001 to 1000"]),
    "temperature text": (dict(scaling="temperature", temperature="2"), ["temperature", "from 0.001 to 1000"]),
    "unknown scaling": (dict(scaling="log"), ["scaling", *SCALINGS]),
    "scaling in capitals": (dict(scaling="SQRT"), ["scaling", *SCALINGS]),
    "unknown source": (dict(source="gpt2"), ["source", *SOURCES]),
    "unknown similarity": (dict(similarity="euclidean"), ["similarity", *SIMILARITIES]),
    "heads_off out of range": (dict(heads_off=(12,)), ["heads_off", "0 to 11"]),
    "heads_off negative": (dict(heads_off=(-1,)), ["heads_off", "0 to 11"]),
    "seed not an int": (dict(seed=1.5), ["seed", "integer"]),
    "seed negative": (dict(seed=-3), ["seed", "from 0 to"]),
}


@pytest.mark.parametrize(("kwargs", "mentions"), list(BAD_SETTINGS.values()), ids=list(BAD_SETTINGS))
def test_bad_settings_name_the_valid_values(kwargs, mentions):
    with pytest.raises(ValueError) as raised:
        TraceSettings(**kwargs).validate(BUNDLED_SHAPE)
    message = str(raised.value)
    missing = [word for word in mentions if word not in message]
    assert not missing, f"{message!r} does not mention {missing}"


def test_build_trace_validates_against_the_models_own_shape(tiny):
    encoding = encode(tiny, "time flies like an arrow")
    for settings, mention in ((TraceSettings(layer=2), "0 to 1"), (TraceSettings(head=4), "0 to 3"),
                              (TraceSettings(head_dim=16), "fixed at 8"),
                              (TraceSettings(source="random", head_dim=33), "1 to 32")):
        with pytest.raises(ValueError, match=mention):
            build_trace(tiny, encoding, settings)


@pytest.mark.parametrize("settings", [
    TraceSettings(),
    TraceSettings(layer=5, head=11),
    TraceSettings(source="bert", head_dim=32),
    TraceSettings(source="random", head_dim=1, head=383),
    TraceSettings(source="random", head_dim=384),
    TraceSettings(source="identity", scaling="temperature", temperature=0.01),
    TraceSettings(heads_off=(0, 11), seed=3),
], ids=str)
def test_good_settings_pass(settings):
    assert settings.validate(BUNDLED_SHAPE) is settings


@pytest.mark.parametrize("heads_off", [3, [1]], ids=["bare int", "list (unhashable)"])
def test_heads_off_that_is_not_a_tuple_is_a_value_error(heads_off):
    with pytest.raises(ValueError, match=r"heads_off must be a tuple of head numbers"):
        TraceSettings(heads_off=heads_off).validate(BUNDLED_SHAPE)


def test_a_seed_beyond_64_bits_is_refused_by_validation():
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 9223372036854775807"):
        TraceSettings(source="random", seed=2**64).validate(BUNDLED_SHAPE)


@pytest.mark.parametrize("temperature", [1e-45, float("inf"), float("nan"), 1e4])
def test_temperatures_that_would_break_softmax_are_refused(temperature):
    with pytest.raises(ValueError, match=r"temperature must be a number from 0.001 to 1000"):
        TraceSettings(scaling="temperature", temperature=temperature).validate(BUNDLED_SHAPE)


def test_numpy_integers_are_accepted_like_python_ones():
    TraceSettings(layer=np.int64(1), head=np.int32(2), temperature=np.float32(2.0)).validate(BUNDLED_SHAPE)


def test_a_folder_without_weights_says_what_it_lacks(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(ModelLoadError, match="could not be loaded as a BERT checkpoint") as raised:
        load_model(str(tmp_path))
    assert "network" not in str(raised.value)


@pytest.mark.parametrize("name", ["", "   "])
def test_an_empty_model_name_is_refused(name):
    with pytest.raises(ModelLoadError, match="No model was named"):
        load_model(name)


def test_an_empty_batch_is_a_value_error(tiny):
    with pytest.raises(ValueError, match="at least one"):
        encode_batch(tiny, [])


def test_an_unknown_model_names_the_allow_list():
    with pytest.raises(ModelLoadError) as raised:
        load_model("someone/some-bert")
    message = str(raised.value)
    assert isinstance(raised.value, ValueError)
    assert "someone/some-bert" in message
    assert BUNDLED_MODEL in message and ALLOWED_MODELS_ENV in message
    assert all(name in message for name in DEFAULT_ALLOWED_HUB_IDS)


def _cached(hub_id: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(hub_id, "config.json"), str)


@pytest.mark.parametrize("hub_id", [DEFAULT_ALLOWED_HUB_IDS[0], "attention-anatomy-tests/no-such-bert"])
def test_an_allowed_hub_model_offline_says_to_use_the_network(monkeypatch, hub_id):
    monkeypatch.setenv(ALLOWED_MODELS_ENV, "attention-anatomy-tests/no-such-bert")
    assert hub_id in allowed_hub_ids()
    if _cached(hub_id):
        pytest.skip(f"{hub_id} is in the local Hugging Face cache, so it loads offline")
    with pytest.raises(ModelLoadError) as raised:
        load_model(hub_id)
    message = str(raised.value)
    assert hub_id in message
    assert "network" in message
    assert BUNDLED_MODEL in message, "the message should offer the model that works offline"


def _save_gpt2(folder):
    from transformers import GPT2Config, GPT2Model

    GPT2Model(GPT2Config(n_embd=16, n_layer=1, n_head=2, vocab_size=64, n_positions=16)).save_pretrained(folder)


def _save_distilbert(folder):
    from transformers import DistilBertConfig, DistilBertModel

    config = DistilBertConfig(dim=16, n_layers=1, n_heads=2, hidden_dim=32, vocab_size=64, max_position_embeddings=16)
    DistilBertModel(config).save_pretrained(folder)


def test_a_checkpoint_of_a_family_the_core_does_not_dissect_is_refused(tmp_path):
    _save_distilbert(tmp_path)
    with pytest.raises(ModelLoadError) as raised:
        load_model(str(tmp_path))
    message = str(raised.value)
    assert "distilbert" in message and "BERT, GPT-2, Llama, Qwen2 or Mistral only" in message
    assert str(tmp_path) in message


def test_a_checkpoint_without_tokenizer_files_is_refused(tmp_path):
    """transformers 5 gives such a folder an empty tokenizer instead of failing; the page would tokenize to nothing."""
    _save_gpt2(tmp_path)
    with pytest.raises(ModelLoadError, match="no tokenizer files") as raised:
        load_model(str(tmp_path))
    assert "GPT-2 checkpoint" in str(raised.value)


def test_a_folder_without_a_config_is_refused(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(ModelLoadError, match="config.json"):
        load_model(str(tmp_path))


@pytest.mark.parametrize("config", ["[1, 2]", "{not json", ""])
def test_an_unreadable_config_is_refused(tmp_path, config):
    (tmp_path / "config.json").write_text(config)
    with pytest.raises(ModelLoadError, match="config.json"):
        load_model(str(tmp_path))


def test_a_bert_config_without_weights_is_a_model_load_error(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(ModelLoadError) as raised:
        load_model(str(tmp_path))
    assert str(tmp_path) in str(raised.value)


def test_the_environment_extends_the_allow_list(monkeypatch):
    monkeypatch.delenv(ALLOWED_MODELS_ENV, raising=False)
    assert allowed_hub_ids() == DEFAULT_ALLOWED_HUB_IDS
    with pytest.raises(ModelLoadError):
        resolve("my-org/bert-small")

    monkeypatch.setenv(ALLOWED_MODELS_ENV, " my-org/bert-small ,, other/bert,bert-base-cased , ")
    assert allowed_hub_ids() == (*DEFAULT_ALLOWED_HUB_IDS, "my-org/bert-small", "other/bert")
    assert resolve("my-org/bert-small") == "my-org/bert-small"
    assert resolve("other/bert") == "other/bert"
    with pytest.raises(ModelLoadError) as raised:
        resolve("not-listed/bert")
    assert "my-org/bert-small" in str(raised.value) and "other/bert" in str(raised.value)


def test_the_tiny_checkpoint_loads_from_its_folder(tiny_checkpoint):
    loaded = load_model(str(tiny_checkpoint))
    assert loaded.name == str(tiny_checkpoint)
    assert loaded.shape == TINY_SHAPE and loaded.shape.head_size == 8
    assert loaded.max_tokens == 64
    assert not loaded.model.training
    assert not any(parameter.requires_grad for parameter in loaded.model.parameters())
    assert loaded.tokenizer.encode("time flies like an arrow").ids == [101, 2051, 10029, 2066, 2019, 8612, 102]


def test_a_checkpoint_saved_with_a_head_loads_its_trained_encoder(tiny_checkpoint, tmp_path):
    """A BertForMaskedLM folder stores the encoder under "bert."; it must load, not be re-initialised."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    torch.manual_seed(123)
    saved = BertForMaskedLM(BertConfig.from_pretrained(tiny_checkpoint))
    saved.save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(tiny_checkpoint).save_pretrained(tmp_path)
    loaded = load_model(str(tmp_path))
    for name in ("embeddings.word_embeddings.weight", "encoder.layer.1.attention.self.query.weight",
                 "encoder.layer.0.attention.output.dense.bias"):
        assert torch.equal(loaded.model.get_parameter(name), saved.bert.get_parameter(name)), name


def test_the_bundled_model_is_the_default(bundled):
    assert bundled.name == BUNDLED_MODEL
    assert bundled.shape == BUNDLED_SHAPE
    assert attention_implementation(bundled.model.config.transformers_config()) == "eager", "the proof's reference"


# One set of limits and checks (attention.stages.limits) serves the core, the counting lab and the page's links.
def test_the_pages_ranges_lie_inside_the_cores():
    assert PAGE_SEED.low >= SEED.low and PAGE_SEED.high <= SEED.high
    assert PAGE_SEED.high == 2**53 - 1, "the largest integer a browser's number holds exactly"
    assert TEMPERATURE.low <= PAGE_TEMPERATURE.low < PAGE_TEMPERATURE.high <= TEMPERATURE.high
    assert IntRange(0, 10).narrowed(-5, None) == IntRange(0, 10)
    assert IntRange(0).narrowed(1, 7) == IntRange(1, 7)
    assert RealRange(1.0, 2.0).narrowed(0.5, 3.0) == RealRange(1.0, 2.0)


@pytest.mark.parametrize("raw", ["1", "2", "13", "20", "21", "24", "x"])
def test_a_links_window_size_is_one_the_counting_lab_offers_and_trains(raw):
    """The counting lab's window size comes from a link (win_size=): inside the page's range, the core's too."""
    assert WIN_SIZE_RANGE.low <= PAGE_WIN_SIZE.low and PAGE_WIN_SIZE.high <= WIN_SIZE_RANGE.high
    assert page_state.PageState().win_size == CountingConfig().win_size, "a link without win_size= opens the default"
    state, notices = page_state.from_query({"win_size": [raw]}, [BUNDLED_MODEL])
    assert bool(notices) is (not raw.isdigit() or int(raw) not in PAGE_WIN_SIZE)
    CountingConfig(win_size=state.win_size).validate()


@pytest.mark.parametrize(("valid", "value", "inside"), [
    (IntRange(0, 5), 5, True),
    (IntRange(0, 5), 6, False),
    (IntRange(0), 10**30, True),
    (IntRange(0, 5), np.int64(3), True),
    (IntRange(0, 5), True, False),
    (IntRange(0, 5), 1.0, False),
    (RealRange(0.5, 2.0), 2, True),
    (RealRange(0.5, 2.0), np.float32(1.5), True),
    (RealRange(0.5, 2.0), float("nan"), False),
    (RealRange(0.5, 2.0), True, False),
    (RealRange(0.5, 2.0), "1", False),
], ids=repr)
def test_a_range_holds_numbers_of_its_kind_only(valid, value, inside):
    assert (value in valid) is inside


def test_the_checks_name_the_range_the_reason_and_the_value():
    with pytest.raises(ValueError, match=r"^layer must be an integer from 0 to 5 \(six layers\); got 6$"):
        IntRange(0, 5).require("layer", 6, "six layers")
    with pytest.raises(ValueError, match=r"^tau must be a number from 0.05 to 20; got inf$"):
        PAGE_TEMPERATURE.require("tau", float("inf"))
    with pytest.raises(ValueError, match=r"^scaling must be one of none, sqrt; got 'log'$"):
        require_choice("scaling", "log", ("none", "sqrt"))


@pytest.mark.parametrize("raw", ["0", "3", "0.05", "20", "1e3", "0.001", "-1", "nan", "9007199254740992",
                                 "9007199254740991", str(2**63)])
def test_a_link_value_the_page_accepts_the_core_accepts_too(raw):
    """The page's parsers check with the core's ranges, so a link can never hand the core a value it refuses."""
    for name, setting in (("temperature", dict(scaling="temperature", temperature=None)),
                          ("seed", dict(source="random", seed=None))):
        state, notices = page_state.from_query({name: [raw]}, [BUNDLED_MODEL])
        if notices:
            continue
        TraceSettings(**{**setting, name: getattr(state, name)}).validate(BUNDLED_SHAPE)
        counting_value = float(state.temperature) if name == "temperature" else state.seed
        CountingConfig(**{name: counting_value}).validate()
